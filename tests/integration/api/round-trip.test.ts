/**
 * Every kind survives create, a status update and get on the real apiserver without losing a field:
 * the CRD schemas keep (do not prune) everything the zod schemas allow.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { check, resourceByKind, type ResourceDefinition } from '../../../shared/api/index.js';
import { FULL_OBJECTS, type FullObject } from '../../../shared/api/testdata/full.js';
import { freshNamespace, kubectl } from '../../env/index.js';

let namespace: string;
const KEEP = 'tests.virtualization.deckhouse.io/round-trip';

beforeAll(async () => {
  namespace = await freshNamespace('api-roundtrip');
});

async function run(args: string[], body?: unknown): Promise<Record<string, unknown>> {
  const res = await kubectl(args, body === undefined ? undefined : { stdin: JSON.stringify(body) });
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${res.stderr}`);
  return JSON.parse(res.stdout) as Record<string, unknown>;
}

function nsArgs(def: ResourceDefinition): string[] {
  return def.scope === 'Namespaced' ? ['-n', namespace] : [];
}

describe('a full object of every kind on the apiserver', () => {
  it.each(FULL_OBJECTS.map((o, i) => [`${o.kind} #${i}`, o, i] as const))('%s survives create, status update and get', async (_name, obj: FullObject, i) => {
    const def = resourceByKind(obj.kind);
    const name = `${obj.metadata.name}-${i}`;
    const withoutStatus: Record<string, unknown> = { ...obj };
    delete withoutStatus['status'];
    // The finalizer keeps the object while this test reads it: a controller of another suite on the same
    // apiserver deletes what it owns and finds orphaned (a StorageProfile without its class, a MAC lease
    // without its address).
    const created = await run(['create', '-o', 'json', '-f', '-', ...nsArgs(def)], {
      ...withoutStatus,
      metadata: { ...obj.metadata, name, finalizers: [KEEP] },
    });
    try {
      await roundTrip(def, obj, name, created);
    } finally {
      await run([
        'patch',
        `${def.plural}.${def.version}.${def.group}`,
        name,
        '--type=merge',
        '-p',
        '{"metadata":{"finalizers":null}}',
        '-o',
        'json',
        ...nsArgs(def),
      ]);
    }
  });
});

/** Writes the fixture's status onto the created object, reads it back and compares both with the fixture. */
async function roundTrip(def: ResourceDefinition, obj: FullObject, name: string, created: Record<string, unknown>): Promise<void> {
  // Unconditional (no resourceVersion): a controller of another suite on the same apiserver may add
  // a finalizer or write status meanwhile (the USB reconcilers watch every NodeUSBDevice and USBDevice).
  const meta = { ...(created['metadata'] as Record<string, unknown>) };
  delete meta['resourceVersion'];
  const withStatus = { ...created, metadata: meta, status: obj.status };
  const sub = def.statusSubresource ? ['--subresource=status'] : [];
  // The status as stored by this write; a later GET could already show another writer's status.
  const replaced = await run(['replace', ...sub, '-o', 'json', '-f', '-', ...nsArgs(def)], withStatus);
  // At the definition's version (kubectl would otherwise pick the preferred one, v1alpha3 for classes).
  const got = await run(['get', `${def.plural}.${def.version}.${def.group}`, name, '-o', 'json', ...nsArgs(def)]);

  const expected = check(def.schema, obj);
  if (!expected.ok) throw new Error(`fixture does not parse: ${JSON.stringify(expected.problems)}`);
  expect({ spec: got['spec'], status: replaced['status'] }).toEqual({
    spec: (expected.value as FullObject).spec,
    status: (expected.value as FullObject).status,
  });
  // What the apiserver returns parses with our schema (metadata included).
  expect(check(def.schema, got)).toMatchObject({ ok: true });
}

describe('the VirtualMachinePool scale subresource', () => {
  it('reads replicas and the selector from the pool and scales spec.replicas', async () => {
    const pool = FULL_OBJECTS.find((o) => o.kind === 'VirtualMachinePool')!;
    const def = resourceByKind('VirtualMachinePool');
    const created = await run(['create', '-o', 'json', '-f', '-', '-n', namespace], { ...pool, status: undefined });
    await run(['replace', '--subresource=status', '-o', 'json', '-f', '-', '-n', namespace], { ...created, status: pool.status });

    const path = `/apis/${def.group}/${def.version}/namespaces/${namespace}/${def.plural}/${pool.metadata.name}/scale`;
    const scale = await run(['get', '--raw', path]);
    const status = pool.status as { replicas: number; selector: string };
    expect(scale).toMatchObject({ spec: { replicas: 3 }, status: { replicas: status.replicas, selector: status.selector } });

    const scaled = await kubectl(['scale', `${def.plural}.${def.group}`, pool.metadata.name, '--replicas=5', '-n', namespace]);
    expect(scaled.code).toBe(0);
    const got = await run(['get', 'vmpool', pool.metadata.name, '-o', 'json', '-n', namespace]);
    expect((got['spec'] as { replicas: number }).replicas).toBe(5);
  });
});
