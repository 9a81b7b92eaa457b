import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../shared/kube/index.js';
import { dispatch } from './dispatch.js';
import { FakeEnrichment, type FakeObjects } from './testing/fake-enrichment.js';
import { GOLDEN_CASES, golden } from './testing/golden.js';
import { decoded } from './testing/events.js';
import { worldObjects } from './testing/world.js';
import { trimmed, type ResourceName } from './kube-resources.js';

/** FakeObjects lists by the resource whose informer would hold them. */
const LISTS: ReadonlyArray<[keyof FakeObjects, ResourceName]> = [
  ['vms', 'vm'],
  ['vds', 'vd'],
  ['vmops', 'vmop'],
  ['pods', 'pod'],
  ['nodes', 'node'],
  ['modules', 'module'],
  ['moduleConfigs', 'moduleConfig'],
  ['internalVMIs', 'internalVMI'],
];

/** The world's objects as the apiserver sends them: the same fields plus everything real objects carry. */
function fullObjects(base: FakeObjects): FakeObjects {
  const fatten = (o: object, i: number): object => {
    const obj = structuredClone(o) as KubeObject & Record<string, unknown>;
    obj.apiVersion = 'example/v1';
    obj.kind = 'Thing';
    obj.metadata = {
      ...obj.metadata,
      resourceVersion: String(100 + i),
      generation: 3,
      creationTimestamp: '2026-12-01T10:00:00Z',
      finalizers: ['example.io/protect'],
      ownerReferences: [{ apiVersion: 'v1', kind: 'Owner', name: 'owner', uid: 'u-1', controller: true }],
      labels: { ...obj.metadata.labels, app: 'thing', 'vm.kubevirt.internal.virtualization.deckhouse.io/other': 'x' },
      annotations: {
        ...obj.metadata.annotations,
        'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ spec: { big: 'x'.repeat(4000) } }),
        'versions.virtualization.deckhouse.io/other-version': '1.0',
      },
    };
    (obj.metadata as Record<string, unknown>)['managedFields'] = [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:x': {} } } }];
    obj['spec'] = { ...(obj['spec'] as object | undefined), containers: [{ name: 'c', image: 'i', env: [{ name: 'A', value: 'b' }] }], replicas: 2 };
    obj['status'] = { ...(obj['status'] as object | undefined), conditions: [{ type: 'Ready', status: 'True', message: 'm'.repeat(500) }] };
    return obj;
  };
  const out: FakeObjects = { ...base };
  for (const [list] of LISTS) (out as Record<string, unknown>)[list] = (base[list] as object[] | undefined)?.map(fatten);
  return out;
}

function trimmedObjects(full: FakeObjects): FakeObjects {
  const out: FakeObjects = { ...full };
  for (const [list, resource] of LISTS) {
    (out as Record<string, unknown>)[list] = (full[list] as KubeObject[] | undefined)?.map((o) => trimmed(resource)(structuredClone(o)));
  }
  return out;
}

/** The same world with the optional fields a builder reads missing (versions, annotations, addresses...). */
function sparseObjects(): FakeObjects {
  const w = worldObjects();
  const strip = (o: object): object => {
    const c = structuredClone(o) as { metadata?: Record<string, unknown>; status?: Record<string, unknown> };
    if (c.metadata !== undefined) {
      delete c.metadata['annotations'];
      delete c.metadata['uid'];
    }
    if (c.status !== undefined) {
      delete c.status['versions'];
      delete c.status['guestOSInfo'];
      delete c.status['addresses'];
    }
    return c;
  };
  return { ...w, vms: w.vms?.map(strip), pods: w.pods?.map(strip), nodes: w.nodes?.map(strip), internalVMIs: w.internalVMIs?.map(strip) };
}

async function records(objects: FakeObjects): Promise<string[]> {
  const enrichment = new FakeEnrichment(objects);
  const out: string[] = [];
  for (const name of GOLDEN_CASES) {
    const outcome = await dispatch(decoded(JSON.parse(golden(name, 'input')) as Record<string, unknown>), enrichment);
    out.push(`${name}: ${JSON.stringify(outcome)}`);
  }
  return out;
}

describe('the informer transform (trimmed cache)', () => {
  it.each([
    ['the golden world', worldObjects],
    ['a world whose objects lack the optional fields', sparseObjects],
  ])('gives the same outcome for every golden event as full objects, in %s', async (_, world) => {
    const full = fullObjects(world());
    const fromFull = await records(full);
    expect(await records(trimmedObjects(full))).toEqual(fromFull);
    // The comparison means something: the world yields records, and the transform dropped a lot.
    expect(fromFull.filter((r) => r.includes('"outcome":"record"')).length).toBeGreaterThan(5);
    expect(JSON.stringify(trimmedObjects(full)).length).toBeLessThan(JSON.stringify(full).length / 10);
  });

  it('keeps only the read labels and annotations, and the metadata the informer needs', () => {
    const pod = fullObjects(worldObjects()).pods?.[1] as KubeObject;
    const thin = trimmed('pod')(structuredClone(pod));
    expect(thin.metadata).toEqual({
      name: 'virt-handler-8k2lp',
      namespace: 'd8-virtualization',
      resourceVersion: '101',
      labels: {},
      annotations: {
        'versions.virtualization.deckhouse.io/qemu-version': '9.2.0',
        'versions.virtualization.deckhouse.io/libvirt-version': '10.9.0',
      },
    });
    expect(thin).toEqual({ metadata: thin.metadata, spec: { nodeName: 'node-1' }, status: {} });
  });

  it('leaves an object that does not match the view whole rather than throwing', () => {
    const odd = { metadata: { name: 'x', resourceVersion: '1' }, spec: { nodeName: 42 } } as unknown as KubeObject;
    expect(trimmed('pod')(odd)).toBe(odd);
  });
});
