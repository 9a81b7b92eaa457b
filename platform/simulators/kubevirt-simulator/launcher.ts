/**
 * virt-launcher pods as KubeVirt makes them, without a guest inside: pure builders and readers. The
 * label and container names are KubeVirt's contract, which the controller reads too: they live in
 * shared/api/internal/launcher.ts.
 */
import { randomBytes } from 'node:crypto';
import type { InternalVirtualMachineInstance } from '../../../shared/api/internal/resources.js';
import { ownerReferenceTo } from '../../../shared/kube/index.js';
import type { LauncherPod } from './kube.js';
import {
  CILIUM_IP_ANNOTATION,
  COMPUTE_CONTAINER,
  CREATED_BY_LABEL,
  DOMAIN_ANNOTATION,
  LAUNCHER_LABEL,
  LAUNCHER_VALUE,
  MIGRATION_LABEL,
  VM_NAME_LABEL,
} from '../../../shared/api/internal/launcher.js';

export { CILIUM_IP_ANNOTATION, COMPUTE_CONTAINER, CREATED_BY_LABEL, DOMAIN_ANNOTATION, LAUNCHER_LABEL, LAUNCHER_VALUE, MIGRATION_LABEL, VM_NAME_LABEL };
export const SIMULATED_IMAGE = 'virt-launcher (kubevirt-simulator: no guest inside)';

type Spec = InternalVirtualMachineInstance['spec'];

export interface TargetPlacement {
  /** The migration this pod is the target of. */
  migrationUid: string;
  /** The node the instance runs on now: the target must be another one. */
  sourceNode: string;
  addedNodeSelector?: Record<string, string> | undefined;
}

/** `virt-launcher-<vmi>-<5 random chars>`, as KubeVirt names them (generateName). */
export function launcherPodName(vmiName: string): string {
  const suffix = randomBytes(4).toString('hex').slice(0, 5);
  return `virt-launcher-${vmiName}-${suffix}`.slice(0, 63);
}

/** The launcher pod of an instance (or the target pod of a migration): its placement and resources. */
export function buildLauncherPod(vmi: InternalVirtualMachineInstance, target?: TargetPlacement): LauncherPod {
  const name = vmi.metadata.name ?? '';
  const spec: Spec = vmi.spec;
  const labels: Record<string, string> = {
    ...(vmi.metadata.labels ?? {}),
    [LAUNCHER_LABEL]: LAUNCHER_VALUE,
    [CREATED_BY_LABEL]: vmi.metadata.uid ?? '',
    [VM_NAME_LABEL]: name,
  };
  if (target !== undefined) labels[MIGRATION_LABEL] = target.migrationUid;
  const nodeSelector = { ...(spec.nodeSelector ?? {}), ...(target?.addedNodeSelector ?? {}) };
  const podSpec: Record<string, unknown> = {
    restartPolicy: 'Never',
    automountServiceAccountToken: false,
    terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 30,
    containers: [{ name: COMPUTE_CONTAINER, image: SIMULATED_IMAGE, resources: spec.domain.resources ?? {} }],
  };
  if (Object.keys(nodeSelector).length > 0) podSpec['nodeSelector'] = nodeSelector;
  if (spec.tolerations !== undefined) podSpec['tolerations'] = spec.tolerations;
  const affinity = target === undefined ? spec.affinity : awayFrom(spec.affinity, target.sourceNode);
  if (affinity !== undefined) podSpec['affinity'] = affinity;
  if (spec.topologySpreadConstraints !== undefined) podSpec['topologySpreadConstraints'] = spec.topologySpreadConstraints;
  if (spec.priorityClassName !== undefined) podSpec['priorityClassName'] = spec.priorityClassName;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: launcherPodName(name),
      namespace: vmi.metadata.namespace,
      labels,
      annotations: { ...(vmi.metadata.annotations ?? {}), [DOMAIN_ANNOTATION]: name },
      ownerReferences: [{ ...ownerReferenceTo(vmi, { controller: true }) }],
    },
    spec: podSpec as LauncherPod['spec'],
  };
}

/** The instance's affinity plus a required term keeping the pod off `node` (added to every term). */
function awayFrom(affinity: Spec['affinity'], node: string): Record<string, unknown> {
  const base = affinity ?? {};
  const nodeAffinity = (base['nodeAffinity'] ?? {}) as Record<string, unknown>;
  const required = (nodeAffinity['requiredDuringSchedulingIgnoredDuringExecution'] ?? {}) as { nodeSelectorTerms?: Record<string, unknown>[] };
  const terms = required.nodeSelectorTerms !== undefined && required.nodeSelectorTerms.length > 0 ? required.nodeSelectorTerms : [{}];
  const notSource = { key: 'metadata.name', operator: 'NotIn', values: [node] };
  const merged = terms.map((t) => ({ ...t, matchFields: [...((t['matchFields'] as unknown[] | undefined) ?? []), notSource] }));
  return { ...base, nodeAffinity: { ...nodeAffinity, requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: merged } } };
}

/** What the simulator needs to know about a pod. */
export type PodState = 'pending' | 'unschedulable' | 'bound' | 'running' | 'ended' | 'deleting';

export function podState(pod: LauncherPod): PodState {
  if (pod.metadata.deletionTimestamp !== undefined) return 'deleting';
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return 'ended';
  if (phase === 'Running') return 'running';
  if (pod.spec?.nodeName !== undefined && pod.spec.nodeName !== '') return 'bound';
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  return scheduled?.status === 'False' && scheduled.reason === 'Unschedulable' ? 'unschedulable' : 'pending';
}

/** Why the scheduler could not place the pod, when it said so. */
export function unschedulableMessage(pod: LauncherPod): string | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False')?.message;
}
