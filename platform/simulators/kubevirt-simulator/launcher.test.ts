import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachineInstance } from '../../../shared/api/internal/resources.js';
import type { LauncherPod } from './kube.js';
import { buildLauncherPod, CILIUM_IP_ANNOTATION, COMPUTE_CONTAINER, MIGRATION_LABEL, podState } from './launcher.js';

const vmi: InternalVirtualMachineInstance = {
  apiVersion: 'internal.virtualization.deckhouse.io/v1',
  kind: 'InternalVirtualizationVirtualMachineInstance',
  metadata: { name: 'web', namespace: 'demo', uid: 'u-1', labels: { app: 'web' }, annotations: { [CILIUM_IP_ANNOTATION]: '10.66.0.5' } },
  spec: {
    domain: { resources: { requests: { cpu: '1', memory: '1Gi' } } },
    nodeSelector: { zone: 'a' },
    tolerations: [{ key: 'dedicated', operator: 'Exists' }],
    terminationGracePeriodSeconds: 60,
  },
};

const pod = (over: Partial<LauncherPod>): LauncherPod => ({ metadata: { name: 'p' }, ...over });

describe('launcher pods', () => {
  it('carries the instance placement, resources, uid label and address annotation, owned by the instance', () => {
    const p = buildLauncherPod(vmi);
    expect(p.metadata.name).toMatch(/^virt-launcher-web-[0-9a-f]{5}$/);
    // As real virt-controller labels them, through the rewriter (tests/integration/kubevirt/real-kubevirt.test.ts).
    expect(p.metadata.labels).toMatchObject({
      app: 'web',
      'kubevirt.internal.virtualization.deckhouse.io/created-by': 'u-1',
      'kubevirt.internal.virtualization.deckhouse.io': 'virt-launcher',
      'vm.internal.virtualization.deckhouse.io/name': 'web',
    });
    expect(p.metadata.annotations?.['kubevirt.internal.virtualization.deckhouse.io/domain']).toBe('web');
    expect(Object.keys(p.metadata.labels ?? {}).filter((k) => k.endsWith('/domain'))).toEqual([]);
    expect(p.metadata.labels?.[MIGRATION_LABEL]).toBeUndefined();
    expect(p.metadata.annotations?.[CILIUM_IP_ANNOTATION]).toBe('10.66.0.5');
    expect(p.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'InternalVirtualizationVirtualMachineInstance', uid: 'u-1', controller: true });
    expect(p.spec).toMatchObject({
      nodeSelector: { zone: 'a' },
      tolerations: [{ key: 'dedicated', operator: 'Exists' }],
      terminationGracePeriodSeconds: 60,
      containers: [{ name: COMPUTE_CONTAINER, resources: { requests: { cpu: '1', memory: '1Gi' } } }],
    });
    expect((p.spec as Record<string, unknown>)['affinity']).toBeUndefined();
  });

  it('keeps a migration target off the source node in every required term and adds the migration node selector', () => {
    const withTerms = {
      ...vmi,
      spec: {
        ...vmi.spec,
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'Exists' }] }, {}] },
          },
        },
      },
    };
    const p = buildLauncherPod(withTerms, { migrationUid: 'm-1', sourceNode: 'node-1', addedNodeSelector: { rack: '2' } });
    expect(p.metadata.labels?.[MIGRATION_LABEL]).toBe('m-1');
    const spec = p.spec as Record<string, unknown>;
    expect(spec['nodeSelector']).toEqual({ zone: 'a', rack: '2' });
    const notSource = { key: 'metadata.name', operator: 'NotIn', values: ['node-1'] };
    expect(spec['affinity']).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'Exists' }], matchFields: [notSource] }, { matchFields: [notSource] }],
        },
      },
    });
    expect((buildLauncherPod(vmi, { migrationUid: 'm', sourceNode: 'n' }).spec as Record<string, unknown>)['affinity']).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n'] }] }] },
      },
    });
  });

  it.each<[string, LauncherPod, string]>([
    ['new', pod({}), 'pending'],
    ['refused by the scheduler', pod({ status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] } }), 'unschedulable'],
    ['bound to a node', pod({ spec: { nodeName: 'n', containers: [] }, status: { phase: 'Pending' } }), 'bound'],
    ['running', pod({ spec: { nodeName: 'n', containers: [] }, status: { phase: 'Running' } }), 'running'],
    ['ended', pod({ status: { phase: 'Failed' } }), 'ended'],
    ['being deleted', pod({ metadata: { name: 'p', deletionTimestamp: '2026-01-01T00:00:00Z' }, status: { phase: 'Running' } }), 'deleting'],
  ])('reads a pod that is %s', (_what, p, state) => {
    expect(podState(p)).toBe(state);
  });
});
