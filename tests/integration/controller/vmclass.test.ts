import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { VirtualMachineClass } from '../../../shared/api/resources/virtualmachineclass.js';
import type { KubeClient } from '../../../shared/kube/index.js';
import type { Clients, Node } from '../../../daemons/controller/kube/resources.js';
import { CPU_FEATURE_LABEL_PREFIX } from '../../../daemons/controller/reconcilers/vmclass/nodes.js';
import { freshNamespace } from '../../env/index.js';
import { clusterImage, makeClusterImageReady, node, vm, vmClass } from './builders.js';
import { SCOPE_LABEL, eventually, gone, mainKube, newScope, startTestController, testClients, type Scope } from './fixtures.js';

let kube: KubeClient;
let c: Clients;
let scope: Scope;
const cleanups: (() => Promise<unknown>)[] = [];
const feature = (name: string): Record<string, string> => ({ [`${CPU_FEATURE_LABEL_PREFIX}${name}`]: 'true' });

beforeAll(async () => {
  kube = mainKube();
  c = testClients(kube);
  scope = newScope(await freshNamespace('ctl-class'));
  const ctl = await startTestController(kube, scope);
  cleanups.push(() => ctl.stop());
  const nodes: [string, Record<string, string>, Node['spec'], Record<string, string>][] = [
    ['a', { zone: 'a', ...feature('avx'), ...feature('sse4_2') }, {}, { cpu: '8', memory: '32Gi' }],
    ['b', { zone: 'b', ...feature('sse4_2') }, { taints: [{ key: 'dedicated', value: 'vm', effect: 'NoSchedule' }] }, { cpu: '16', memory: '16Gi' }],
  ];
  for (const [name, labels, spec, allocatable] of nodes) {
    const n = await c.nodes.create(node(scope, name, labels, spec));
    await c.nodes.patchStatus({ name: n.metadata.name ?? '' }, { allocatable });
    cleanups.push(() => c.nodes.delete({ name: n.metadata.name ?? '' }));
  }
});
afterAll(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  kube.close();
});

async function classWhen(name: string, check: (cls: VirtualMachineClass) => boolean, what: string): Promise<VirtualMachineClass> {
  return eventually(async () => {
    const got = await c.classes.get({ name });
    return check(got) && got;
  }, `${name}: ${what}`);
}
const ready = (cls: VirtualMachineClass): string | undefined => {
  const r = cls.status?.conditions?.find((x) => x.type === 'Ready');
  return r === undefined ? undefined : `${r.status}/${r.reason}`;
};
const nodeName = (n: string): string => `${n}-${scope.id}`;

describe('VirtualMachineClass status', () => {
  it('lists the nodes its selector matches whose taints it tolerates, with the largest allocatable resources', async () => {
    const plain = await c.classes.create(vmClass(scope, 'plain'));
    const got = await classWhen(plain.metadata.name ?? '', (x) => x.status?.phase === 'Ready', 'Ready');
    expect(got.status?.availableNodes).toEqual([nodeName('a')]);
    expect(got.status?.maxAllocatableResources).toEqual({ cpu: '8', memory: '32Gi' });
    expect(ready(got)).toBe('True/SuitableNodesFound');
    expect(got.status?.conditions?.find((x) => x.type === 'Discovered')?.reason).toBe('DiscoverySkip');

    const tolerant = await c.classes.create(vmClass(scope, 'tolerant', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'vm' }] }));
    const both = await classWhen(tolerant.metadata.name ?? '', (x) => x.status?.phase === 'Ready', 'Ready');
    expect(both.status?.availableNodes).toEqual([nodeName('a'), nodeName('b')].sort());
    expect(both.status?.maxAllocatableResources).toEqual({ cpu: '16', memory: '32Gi' });
  });

  it('stays Pending without suitable nodes and becomes Ready when one appears', async () => {
    const zoneC = await c.classes.create(
      vmClass(scope, 'zone-c', {
        nodeSelector: { matchLabels: { [SCOPE_LABEL]: scope.id }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['c'] }] },
      }),
    );
    const name = zoneC.metadata.name ?? '';
    const pending = await classWhen(name, (x) => x.status?.phase === 'Pending' && ready(x) !== undefined, 'Pending');
    expect(ready(pending)).toBe('False/NoSuitableNodesFound');
    const n = await c.nodes.create(node(scope, 'c', { zone: 'c' }));
    cleanups.push(() => c.nodes.delete({ name: n.metadata.name ?? '' }));
    const got = await classWhen(name, (x) => x.status?.phase === 'Ready', 'Ready');
    expect(got.status?.availableNodes).toEqual([n.metadata.name]);
  });

  it('discovers the CPU features its nodes share', async () => {
    const disco = await c.classes.create(
      vmClass(scope, 'disco', {
        cpu: { type: 'Discovery' },
        tolerations: [{ key: 'dedicated', operator: 'Exists' }],
        nodeSelector: {
          matchExpressions: [
            { key: 'zone', operator: 'In', values: ['a', 'b'] },
            { key: SCOPE_LABEL, operator: 'In', values: [scope.id] },
          ],
        },
      }),
    );
    const got = await classWhen(disco.metadata.name ?? '', (x) => x.status?.phase === 'Ready', 'Ready');
    expect(got.status?.cpuFeatures?.enabled).toEqual(['sse4_2']);
    expect(got.status?.conditions?.find((x) => x.type === 'Discovered')?.reason).toBe('DiscoverySucceeded');
  });

  it('is not deleted while a VM uses it (InUse), and goes once the VM is gone', async () => {
    const cls = await c.classes.create(vmClass(scope, 'used'));
    const name = cls.metadata.name ?? '';
    await classWhen(name, (x) => x.status?.phase === 'Ready', 'Ready');
    const cvi = await c.clusterImages.create(clusterImage(scope, 'img'));
    await makeClusterImageReady(c, cvi.metadata.name ?? '');
    await c.vms.create(vm(scope, 'user', name, { runPolicy: 'AlwaysOff', blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: cvi.metadata.name ?? '' }] }));
    await classWhen(name, (x) => x.status?.conditions?.some((k) => k.type === 'InUse' && k.status === 'True') === true, 'InUse');
    await c.classes.delete({ name });
    const held = await classWhen(name, (x) => x.status?.phase === 'Terminating', 'Terminating');
    expect(held.metadata.deletionTimestamp).toBeDefined();
    await c.vms.delete({ namespace: scope.namespace, name: 'user' });
    await eventually(() => gone(() => c.classes.get({ name })), 'class gone');
  });

  it('tells a VM whose core count no sizing policy covers', async () => {
    const sized = await c.classes.create(vmClass(scope, 'sized', { sizingPolicies: [{ cores: { min: 1, max: 4 }, coreFractions: [50, 100] }] }));
    const name = sized.metadata.name ?? '';
    await classWhen(name, (x) => x.status?.phase === 'Ready', 'Ready');
    await c.vms.create(
      vm(scope, 'big', name, { runPolicy: 'AlwaysOff', cpu: { cores: 8, coreFraction: '100%' }, blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'none' }] }),
    );
    const got = await eventually(async () => {
      const v = await c.vms.get({ namespace: scope.namespace, name: 'big' });
      return v.status?.conditions?.find((x) => x.type === 'SizingPolicyMatched');
    }, 'SizingPolicyMatched');
    expect(got).toMatchObject({ status: 'False', reason: 'SizingPolicyNotMatched' });
  });
});
