/**
 * The controller's caches keep trimmed objects (caches.ts: no managedFields; nodes through nodeView;
 * launcher pods through launcherPodView).
 * The class reconciler, the one reader of nodes, must decide the same from trimmed nodes as from the
 * whole objects a real kubelet publishes.
 */
import { describe, expect, it } from '@jest/globals';
import { withoutManagedFields } from '../../../shared/kube/index.js';
import type { VirtualMachineClass } from '../../../shared/api/resources/virtualmachineclass.js';
import { vmClass } from '../../../tests/integration/controller/builders.js';
import { CPU_FEATURE_LABEL_PREFIX } from '../reconcilers/vmclass/nodes.js';
import { vmClassReconciler } from '../reconcilers/vmclass/index.js';
import { inMemoryDeps } from '../testing/in-memory.js';
import { launcherPodView, nodeView, type Node, type Pod } from './resources.js';
import { NETWORKS_STATUS_ANNOTATION, networkProblems } from '../reconcilers/vm/handlers/network.js';
import { unscheduledOf } from '../reconcilers/vm/phase.js';
import type { InternalVirtualMachineInstance } from '../../../shared/api/internal/resources.js';
import { USBIP_HS_USED_ANNOTATION, USBIP_SS_USED_ANNOTATION, USBIP_TOTAL_PORTS_ANNOTATION, usbipPortFree } from '../../../shared/api/usbip.js';

const scope = { namespace: 'ns', id: 'trim' };
const f = (name: string): string => `${CPU_FEATURE_LABEL_PREFIX}${name}`;

/** A node as the apiserver serves it: managedFields, annotations, images, conditions, addresses, nodeInfo. */
function fullNode(name: string, labels: Record<string, string>, spec: Node['spec'], allocatable: Record<string, string>): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: '4711',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { 'kubernetes.io/hostname': name, trim: 'trim', ...labels },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
      managedFields: [{ manager: 'kubelet', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'f:images': {} } } }],
    },
    spec: { podCIDR: '10.244.1.0/24', providerID: `kind://${name}`, ...spec },
    status: {
      allocatable,
      capacity: { cpu: '64', memory: '256Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: '2026-01-01T00:00:10Z' }],
      addresses: [{ type: 'InternalIP', address: '192.0.2.10' }],
      images: Array.from({ length: 50 }, (_, i) => ({ names: [`registry.example/image-${i}@sha256:${'0'.repeat(64)}`], sizeBytes: 1e8 + i })),
      nodeInfo: { kubeletVersion: 'v1.34.0', osImage: 'Debian', architecture: 'amd64' },
    },
  };
}

const nodes: Node[] = [
  fullNode('a', { [f('sse4_2')]: 'true', [f('avx')]: 'true', zone: 'a' }, {}, { cpu: '32', memory: '128Gi' }),
  fullNode('b', { [f('sse4_2')]: 'true', zone: 'b' }, { taints: [{ key: 'dedicated', value: 'vm', effect: 'NoSchedule' }] }, { cpu: '48', memory: '64Gi' }),
  fullNode('c', { [f('avx')]: 'true', zone: 'a' }, { unschedulable: true }, { cpu: '96', memory: '512Gi' }),
  fullNode('d', { zone: 'a' }, { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }] }, { cpu: '8', memory: '16Gi' }),
];

const classes: Array<[string, Partial<VirtualMachineClass['spec']>]> = [
  ['Discovery on every node', { cpu: { type: 'Discovery' }, nodeSelector: { matchLabels: { trim: 'trim' } } }],
  [
    'Discovery tolerating the dedicated taint',
    { cpu: { type: 'Discovery' }, nodeSelector: { matchLabels: { trim: 'trim' } }, tolerations: [{ key: 'dedicated', operator: 'Exists' }] },
  ],
  ['Features avx in zone a', { cpu: { type: 'Features', features: ['avx'] }, nodeSelector: { matchLabels: { zone: 'a' } } }],
  ['Model on no node', { cpu: { type: 'Model', model: 'Nehalem' }, nodeSelector: { matchLabels: { zone: 'z' } } }],
];

/** The class status the reconciler writes over these nodes (transition times left out). */
async function decide(spec: Partial<VirtualMachineClass['spec']>, seen: Node[]): Promise<unknown> {
  const cls = vmClass(scope, 'c', spec);
  const { deps, kinds } = inMemoryDeps({ seed: { classes: [cls], nodes: seen } });
  await vmClassReconciler(deps)(cls.metadata.name ?? '', new AbortController().signal);
  const status = kinds.classes.stored(cls.metadata.name ?? '')?.status;
  return { ...status, conditions: status?.conditions?.map((c) => ({ ...c, lastTransitionTime: 'left out' })) };
}

describe('the trimmed node cache', () => {
  it('keeps only what NodeSchema names', () => {
    expect(nodeView(nodes[1])).toEqual({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'b', uid: 'uid-b', resourceVersion: '4711', creationTimestamp: '2026-01-01T00:00:00Z', labels: nodes[1].metadata.labels },
      spec: { taints: [{ key: 'dedicated', value: 'vm', effect: 'NoSchedule' }] },
      status: { allocatable: { cpu: '48', memory: '64Gi' } },
    });
    expect(JSON.stringify(nodeView(nodes[0])).length * 10).toBeLessThan(JSON.stringify(nodes[0]).length);
  });

  it("keeps the USB/IP gateway's port annotations, which a VM's USB device of another node reads, and no other annotation", () => {
    const annotations = {
      [USBIP_TOTAL_PORTS_ANNOTATION]: '8',
      [USBIP_HS_USED_ANNOTATION]: '1',
      [USBIP_SS_USED_ANNOTATION]: '4',
      'usb.virtualization.deckhouse.io/usbip-address': '10.0.0.1:3240',
      'node.alpha.kubernetes.io/ttl': '0',
    };
    const marked: Node = { metadata: { name: 'gw', annotations } };
    const trimmed = nodeView(marked);
    expect(trimmed.metadata.annotations).toEqual({ [USBIP_TOTAL_PORTS_ANNOTATION]: '8', [USBIP_HS_USED_ANNOTATION]: '1', [USBIP_SS_USED_ANNOTATION]: '4' });
    for (const speed of [480, 5000]) expect(usbipPortFree(trimmed.metadata.annotations, speed)).toBe(usbipPortFree(annotations, speed));
    expect(usbipPortFree(trimmed.metadata.annotations, 5000)).toBe('full');
  });

  it('keeps a node with no spec or status as it is', () => {
    expect(nodeView({ metadata: { name: 'bare' } })).toEqual({ metadata: { name: 'bare' } });
  });

  it('makes a decision worth comparing: nodes taken and left out for their labels, taints and unschedulable', async () => {
    const [, spec] = classes[0] ?? ['', {}];
    expect(await decide(spec, nodes)).toMatchObject({ availableNodes: ['a', 'd'], maxAllocatableResources: { cpu: '32', memory: '128Gi' } });
  });

  it.each(classes)('decides a class (%s) the same from trimmed nodes as from whole ones', async (_what, spec) => {
    const full = await decide(spec, nodes);
    expect(await decide(spec, nodes.map(nodeView))).toEqual(full);
    expect(await decide(spec, nodes.map(withoutManagedFields))).toEqual(full);
  });
});

describe('the trimmed launcher-pod cache (launcherPodView keeps what the VM reconciler reads)', () => {
  const networks = JSON.stringify([{ name: 'default', conditions: [{ type: 'Ready', status: 'False', message: 'no route' }] }]);
  /** A launcher pod as virt-controller and a kubelet leave it, with the parts no reader of ours needs. */
  const full: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'virt-launcher-web-abcde',
      namespace: 'ns',
      uid: 'pod-uid',
      resourceVersion: '17',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { 'kubevirt.internal.virtualization.deckhouse.io': 'virt-launcher', 'kubevirt.internal.virtualization.deckhouse.io/created-by': 'vmi-uid' },
      annotations: { 'kubevirt.internal.virtualization.deckhouse.io/domain': 'web', [NETWORKS_STATUS_ANNOTATION]: networks },
      ownerReferences: [
        { apiVersion: 'internal.virtualization.deckhouse.io/v1', kind: 'InternalVirtualizationVirtualMachineInstance', name: 'web', uid: 'vmi-uid' },
      ],
      managedFields: [{ manager: 'virt-controller', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }],
    },
    spec: {
      nodeName: 'node-1',
      containers: [
        {
          name: 'compute',
          image: 'virt-launcher',
          volumeMounts: [{ name: 'private', mountPath: '/var/run/kubevirt-private' }],
          env: [{ name: 'POD_NAME', value: 'x' }],
        },
      ],
      volumes: [{ name: 'private', emptyDir: {} }],
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } },
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }],
    },
    status: {
      phase: 'Pending',
      reason: 'Evicted',
      message: 'The node was low on resource: memory.',
      podIP: '10.244.0.7',
      qosClass: 'Burstable',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: '0/2 nodes are available',
          lastTransitionTime: '2026-01-01T00:00:01Z',
          observedGeneration: 1,
        },
      ],
      containerStatuses: [
        {
          name: 'compute',
          image: 'virt-launcher',
          imageID: `sha256:${'0'.repeat(64)}`,
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ContainerCreating', message: 'pulling' } },
          lastState: { terminated: { reason: 'Error', message: '{"event":"shutdown"}', exitCode: 1 } },
        },
      ],
      initContainerStatuses: [{ name: 'container-disk-binary', state: { terminated: { exitCode: 0 } } }],
    },
  };

  it('keeps the metadata, the node, the phase, why, the conditions and the containers’ waiting and termination; drops the rest', () => {
    const kept = launcherPodView(full);
    expect(kept.metadata).not.toHaveProperty('managedFields');
    expect(kept).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: withoutManagedFields(full).metadata,
      spec: { nodeName: 'node-1' },
      status: {
        phase: 'Pending',
        reason: 'Evicted',
        message: 'The node was low on resource: memory.',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes are available' }],
        containerStatuses: [
          {
            name: 'compute',
            state: { waiting: { reason: 'ContainerCreating' } },
            lastState: { terminated: { reason: 'Error', message: '{"event":"shutdown"}' } },
          },
        ],
      },
    });
  });

  it('gives the VM handlers the same answers as the whole pod', () => {
    const kept = launcherPodView(full);
    expect(networkProblems([kept])).toBe(networkProblems([full]));
    expect(networkProblems([kept])).toMatch(/no route/);
    const vmi = { metadata: { name: 'web', namespace: 'ns', uid: 'vmi-uid' }, status: { phase: 'Pending' } } as InternalVirtualMachineInstance;
    // The VM's Running condition is made of the reason and message (lifecycle.ts).
    const told = (pod: Pod) => {
      const c = unscheduledOf(vmi, pod);
      return c === undefined ? undefined : { reason: c.reason, message: c.message };
    };
    expect(told(kept)).toEqual(told(full));
    expect(told(kept)).toEqual({ reason: 'Unschedulable', message: '0/2 nodes are available' });
  });
});
