/** The install reconcile of KubeVirt's configuration over an in-memory kind: required parts put back in one conditional patch, nothing else. */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { load as parseYaml } from 'js-yaml';
import { missingKubeVirtParts } from '../../../../shared/api/internal/kubevirt-required.js';
import type { InternalKubeVirt } from '../../../../shared/api/internal/resources.js';
import { ConflictError } from '../../../../shared/errors/index.js';
import { InMemoryKind } from '../../testing/in-memory.js';
import { configPort } from './parts.js';
import { kubeVirtConfigReconciler } from './reconciler.js';

const installed = (): InternalKubeVirt => {
  const kv = parseYaml(readFileSync(new URL('../../../../knative/kubevirt/config/kubevirt-config.yaml', import.meta.url), 'utf8')) as InternalKubeVirt;
  return kv;
};
const KEY = 'd8-virtualization/config';
const withoutBinding = (): InternalKubeVirt => {
  const kv = installed();
  delete (kv.spec.configuration as { network: { binding: Record<string, unknown> } }).network.binding['bpfbridge'];
  return kv;
};

function world(seed: InternalKubeVirt[], repair = true) {
  const kind = new InMemoryKind<InternalKubeVirt>('InternalVirtualizationKubeVirt');
  kind.seed(seed);
  const reconcile = kubeVirtConfigReconciler({ client: kind, cache: kind.cache, repair });
  return { kind, run: () => reconcile(KEY, new AbortController().signal) };
}

describe('the KubeVirt configuration reconcile', () => {
  it('puts the bpfbridge binding back, conditional on the version it read, keeping everything else', async () => {
    const w = world([withoutBinding()]);
    await w.run();
    const patches = w.kind.calls.filter((c) => c.verb === 'mergePatch');
    expect(patches).toHaveLength(1);
    expect(patches[0]?.body).toMatchObject({ metadata: { resourceVersion: expect.any(String) as unknown } });
    const now = w.kind.stored(KEY);
    expect(now && missingKubeVirtParts(now)).toEqual([]);
    expect(now?.spec).toEqual(installed().spec);
  });

  it.each<[string, InternalKubeVirt[], boolean]>([
    ['the configuration is whole', [installed()], true],
    ['the object does not exist (KubeVirt not installed yet)', [], true],
    ['repair is off (KUBEVIRT_CONFIG_REPAIR=false)', [withoutBinding()], false],
  ])('writes nothing when %s', async (_what, seed, repair) => {
    const w = world(seed, repair);
    await w.run();
    expect(w.kind.calls).toEqual([]);
  });

  it('fails the pass on a conflict, so the runner decides again on the newer version', async () => {
    const w = world([withoutBinding()]);
    w.kind.failNext = new ConflictError('edited meanwhile');
    await expect(w.run()).rejects.toBeInstanceOf(ConflictError);
  });
});

describe('what the VMs read of it', () => {
  it('names the missing parts, and nothing while the object does not exist', () => {
    const kind = new InMemoryKind<InternalKubeVirt>('InternalVirtualizationKubeVirt');
    const port = configPort(kind.cache, KEY);
    expect(port.missing()).toEqual([]);
    kind.seed([withoutBinding()]);
    expect(port.missing()).toEqual(['network binding bpfbridge (tap attachment, with migration)']);
    expect(port.where).toBe(`InternalVirtualizationKubeVirt ${KEY}`);
  });
});
