/**
 * Whatever arrives, every webhook answers: random bodies, random objects, and valid objects with
 * random fields replaced. No exception escapes and no check fails internally.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { answerReview } from './answer.js';
import type { Operation } from './decision.js';
import { FakeLookups, context, emptyWorld, type World } from './testing/fake-lookups.js';
import { clusterImage, disk, image, lease, moduleConfig, pool, request, typed, vm, vmbda, vmClass, vmip, vmop } from './testing/objects.js';
import { WEBHOOKS, type Webhook } from './webhooks.js';

const KINDS: Record<string, { group: string; version: string; kind: string; sample: () => unknown }> = {
  vm: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualMachine', sample: () => vm() },
  'vm-defaulter': { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualMachine', sample: () => vm() },
  vd: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualDisk', sample: () => disk() },
  vi: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualImage', sample: () => image() },
  cvi: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'ClusterVirtualImage', sample: () => clusterImage() },
  vmbda: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualMachineBlockDeviceAttachment', sample: () => vmbda() },
  vmip: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualMachineIPAddress', sample: () => vmip() },
  vmipl: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualMachineIPAddressLease', sample: () => lease('10.66.0.5') },
  vmop: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualMachineOperation', sample: () => vmop() },
  'vmclass-v1alpha2': { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualMachineClass', sample: () => vmClass() },
  'vmclass-v1alpha3': {
    group: 'virtualization.deckhouse.io',
    version: 'v1alpha3',
    kind: 'VirtualMachineClass',
    sample: () => ({
      ...vmClass(),
      apiVersion: 'virtualization.deckhouse.io/v1alpha3',
      spec: { cpu: { type: 'Host' }, sizingPolicies: [{ cores: { min: 1, max: 4 }, coreFractions: ['10%', '100%'], defaultCoreFraction: '10%' }] },
    }),
  },
  vmpool: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', kind: 'VirtualMachinePool', sample: () => pool() },
  'vmpool-scale': {
    group: 'autoscaling',
    version: 'v1',
    kind: 'Scale',
    sample: () => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'ns1' }, spec: { replicas: 2 } }),
  },
  moduleconfig: { group: 'deckhouse.io', version: 'v1alpha1', kind: 'ModuleConfig', sample: () => moduleConfig({ virtualMachineCIDRs: ['10.66.0.0/16'] }) },
};

/** A world where most lookups find something, so that checks get past their early returns. */
function busyWorld(): World {
  const w = emptyWorld();
  w.classes.push(
    typed.vmClass(),
    typed.vmClass(
      (c) => void ((c.metadata.name = 'odd'), (c.spec.sizingPolicies = [{ cores: { min: 1, max: 2 }, coreFractions: [], defaultCoreFraction: 'Auto' }])),
    ),
  );
  w.vms.push(typed.vm((o) => void ((o.metadata.name = 'vm2'), (o.spec.usbDevices = [{ name: 'token' }]))));
  w.attachments.push(typed.vmbda());
  w.operations.push(typed.vmop((o) => void ((o.metadata.name = 'earlier'), (o.status = { phase: 'InProgress' }))));
  w.leases.push(typed.lease('10.66.0.5'));
  w.images.push(typed.image((i) => void (i.status = { phase: 'Ready', cdrom: false, size: { unpackedBytes: 'NaN' } })));
  w.clusterImages.push(typed.clusterImage((i) => void (i.status = { phase: 'Ready' })));
  w.pools.push(typed.pool((p) => void (p.spec.scaleDownPolicy = 'Explicit')));
  w.storageClasses.push({ name: 'fast', provisioner: 'x', isDefault: true });
  w.nodes.push({ name: 'node-a', addresses: ['10.66.1.1', 'not-an-ip'], annotations: { 'usb.virtualization.deckhouse.io/usbip-total-ports': 'x' } });
  w.pvcs.push({ namespace: 'd8-virtualization', name: 'dvcr', storageClassName: undefined, size: 'garbage', accessModes: [] });
  w.apis.push('resource.k8s.io/v1/resourceclaims', 'network.deckhouse.io/v1alpha1/networks', 'autoscaling.k8s.io/v1/verticalpodautoscalers');
  w.settings = { ...w.settings, featureGates: ['GPU', 'HotplugCPUAndMemoryWithInPlaceResize'] };
  return w;
}

const domainValue = fc.oneof(
  fc.constantFrom(
    '',
    'a',
    'vm1',
    'root',
    'generic',
    'odd',
    '10Gi',
    '0',
    '-1Gi',
    '1e400',
    '50%',
    'Auto',
    '0%',
    '10.66.0.5',
    'ip-10-66-0-5',
    'Main',
    'Network',
    'Legacy',
    'Ready',
    'Migrating',
    'virtualization.deckhouse.io/x',
    'a'.repeat(70),
    '10.66.0.0/16',
    '10.111.0.0/24',
  ),
  fc.constantFrom(0, 1, -1, 16, 17, 248, 249, 2 ** 31, 1.5, Number.MAX_SAFE_INTEGER),
  fc.boolean(),
  fc.constant(null),
  fc.anything({ maxDepth: 2 }),
);

/** Every path to a value inside `value` (objects and arrays both), for replacing one of them. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [prefix];
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return [prefix, ...entries.flatMap(([k, v]) => paths(v, [...prefix, k]))];
}

function replaced(object: unknown, path: Array<string | number>, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(object) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  parent[path[path.length - 1]] = value;
  return copy;
}

const mutated = (sample: unknown): fc.Arbitrary<unknown> => {
  const all = paths(sample);
  return fc.array(fc.tuple(fc.integer({ min: 0, max: all.length - 1 }), domainValue), { minLength: 1, maxLength: 4 }).map((changes) =>
    changes.reduce<unknown>((o, [i, v]) => {
      const p = all[i] ?? [];
      try {
        return replaced(o, p, v);
      } catch {
        return o;
      }
    }, sample),
  );
};

const operation = fc.constantFrom<Operation>('CREATE', 'UPDATE', 'DELETE', 'CONNECT');

async function admitsWithoutFailure(webhook: Webhook, body: unknown): Promise<void> {
  const answered = await answerReview(webhook, body, context(new FakeLookups(busyWorld())));
  if (answered.ok) {
    expect(answered.answer.failures).toEqual([]);
    expect(typeof answered.review.response.allowed).toBe('boolean');
  } else {
    expect(answered.message).toMatch(/^invalid AdmissionReview: /);
  }
}

const envelope = (webhook: Webhook, object: unknown, oldObject: unknown, op: Operation): unknown => {
  const k = KINDS[webhook.name];
  const req = request(object, {
    oldObject: op === 'UPDATE' ? oldObject : undefined,
    operation: op,
    kind: k === undefined ? undefined : { group: k.group, version: k.version, kind: k.kind },
  });
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req };
};

describe.each(WEBHOOKS.map((w) => [w.name, w] as const))('webhook %s on arbitrary input', (_name, webhook) => {
  const sample = KINDS[webhook.name]?.sample ?? (() => ({}));

  it('answers any JSON body without throwing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), (body) => admitsWithoutFailure(webhook, body)),
      { numRuns: 100 },
    );
  });

  it('answers a well-formed review of any object without a failing check', async () => {
    await fc.assert(
      fc.asyncProperty(fc.anything(), fc.anything(), operation, (object, old, op) => admitsWithoutFailure(webhook, envelope(webhook, object, old, op))),
      { numRuns: 150 },
    );
  });

  it('answers valid objects with random fields replaced without a failing check', async () => {
    await fc.assert(
      fc.asyncProperty(mutated(sample()), mutated(sample()), fc.constantFrom<Operation>('CREATE', 'UPDATE'), (object, old, op) =>
        admitsWithoutFailure(webhook, envelope(webhook, object, old, op)),
      ),
      { numRuns: 300 },
    );
  });
});
