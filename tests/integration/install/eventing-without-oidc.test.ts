/**
 * knative/components/eventing-without-oidc, for clusters where Knative's sender identity is off: an
 * overlay of the install with the component removes exactly the unauthenticated event path to
 * pre-delete (the ModuleConfig ApiServerSource and the two Triggers) and changes nothing else, so
 * pre-delete keeps checking senders and the hook Job does the clean-up. A component whose deletion
 * names an object the install lacks fails the build, naming it.
 */
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { kubectl } from '../../env/index.js';
import { containersOf, isKnativeService, keyOf, KNATIVE_DIR, kustomize, type Manifest } from './manifests.js';

const COMPONENT = join(KNATIVE_DIR, 'components', 'eventing-without-oidc');

describe('the eventing-without-oidc component', () => {
  let work = '';
  let plain: Manifest[] = [];
  let withComponent: Manifest[] = [];

  /** An overlay of the install with `component` (kustomize wants relative paths). */
  async function overlay(name: string, component: string): Promise<string> {
    const dir = join(work, name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'kustomization.yaml'), `resources: [${relative(dir, KNATIVE_DIR)}]\ncomponents: [${relative(dir, component)}]\n`);
    return dir;
  }

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'no-oidc-'));
    plain = await kustomize();
    withComponent = await kustomize(await overlay('good', COMPONENT));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('removes the ApiServerSource and the Triggers to pre-delete, and nothing else changes', () => {
    const kept = new Map(withComponent.map((m) => [keyOf(m), m]));
    const removed = plain.filter((m) => !kept.has(keyOf(m))).map(keyOf);
    expect(removed.sort()).toEqual([
      'ApiServerSource/d8-virtualization/moduleconfigs',
      'Trigger/d8-virtualization/pre-delete-on-delete',
      'Trigger/d8-virtualization/pre-delete-on-update',
    ]);
    expect(withComponent.length).toBe(plain.length - 3);
    for (const m of plain.filter((p) => kept.has(keyOf(p)))) expect(kept.get(keyOf(m))).toEqual(m);
  });

  it('leaves pre-delete checking its senders (SENDER_AUTH never none) and no Trigger delivering to it', () => {
    const preDelete = withComponent.find((m) => isKnativeService(m) && m.metadata.name === 'pre-delete');
    const env = (containersOf(preDelete as Manifest)[0] as { env?: Array<{ name: string; value?: string }> } | undefined)?.env ?? [];
    expect(preDelete).toBeDefined();
    expect(env.find((e) => e.name === 'SENDER_AUTH')?.value ?? 'kubernetes').toBe('kubernetes');
    const triggers = withComponent
      .filter((m) => m.kind === 'Trigger')
      .map((m) => (m['spec'] as { subscriber?: { ref?: { name?: string } } }).subscriber?.ref?.name);
    expect(triggers).not.toContain('pre-delete');
  });

  it('fails to build, naming the object, when a deletion names an object the install does not have', async () => {
    const broken = join(work, 'broken-component');
    await mkdir(broken, { recursive: true });
    const text = await readFile(join(COMPONENT, 'kustomization.yaml'), 'utf8');
    await writeFile(join(broken, 'kustomization.yaml'), text.replace('name: pre-delete-on-update', 'name: pre-delete-renamed'));
    const res = await kubectl(['kustomize', await overlay('broken', broken)]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('pre-delete-renamed');
  });
});
