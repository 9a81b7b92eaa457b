import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../../../../shared/api/resources/virtualmachineclass.js';

type VMSpec = VirtualMachine['spec'];
type NodeSelectorTerm = { matchExpressions?: unknown[]; matchFields?: unknown[] };

export interface Placement {
  nodeSelector?: Record<string, string>;
  tolerations?: Record<string, unknown>[];
  affinity?: Record<string, unknown>;
}

/**
 * Where the VM may run: node selector = VM ∪ class matchLabels; tolerations = VM then class; node
 * affinity = the VM's, with the class matchExpressions added to every required term; the VM-and-pod
 * (anti-)affinity becomes pod (anti-)affinity.
 */
export function placementOf(vm: VirtualMachine, vmClass: VirtualMachineClass): Placement {
  const out: Placement = {};
  const nodeSelector = { ...(vmClass.spec.nodeSelector?.matchLabels ?? {}), ...(vm.spec.nodeSelector ?? {}) };
  if (Object.keys(nodeSelector).length > 0) out.nodeSelector = nodeSelector;
  const tolerations = [...(vm.spec.tolerations ?? []), ...(vmClass.spec.tolerations ?? [])];
  if (tolerations.length > 0) out.tolerations = tolerations;
  const affinity = affinityOf(vm.spec, vmClass.spec.nodeSelector?.matchExpressions ?? []);
  if (affinity !== undefined) out.affinity = affinity;
  return out;
}

function affinityOf(spec: VMSpec, classExpressions: readonly unknown[]): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  const nodeAffinity = withClassExpressions(spec.affinity?.nodeAffinity, classExpressions);
  if (nodeAffinity !== undefined) out['nodeAffinity'] = nodeAffinity;
  const podAffinity = podAffinityOf(spec.affinity?.virtualMachineAndPodAffinity);
  if (podAffinity !== undefined) out['podAffinity'] = podAffinity;
  const podAntiAffinity = podAffinityOf(spec.affinity?.virtualMachineAndPodAntiAffinity);
  if (podAntiAffinity !== undefined) out['podAntiAffinity'] = podAntiAffinity;
  return Object.keys(out).length === 0 ? undefined : out;
}

function withClassExpressions(
  nodeAffinity: NonNullable<VMSpec['affinity']>['nodeAffinity'],
  classExpressions: readonly unknown[],
): Record<string, unknown> | undefined {
  if (classExpressions.length === 0) return nodeAffinity === undefined ? undefined : { ...nodeAffinity };
  const required = nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  const terms: NodeSelectorTerm[] = required.length === 0 ? [{}] : required;
  const merged = terms.map((t) => ({ ...t, matchExpressions: [...(t.matchExpressions ?? []), ...classExpressions] }));
  return { ...nodeAffinity, requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: merged } };
}

type VMPodAffinity = NonNullable<VMSpec['affinity']>['virtualMachineAndPodAffinity'];

function podAffinityOf(source: VMPodAffinity): Record<string, unknown> | undefined {
  if (source === undefined) return undefined;
  const out: Record<string, unknown> = {};
  if (source.requiredDuringSchedulingIgnoredDuringExecution !== undefined) {
    out['requiredDuringSchedulingIgnoredDuringExecution'] = source.requiredDuringSchedulingIgnoredDuringExecution;
  }
  if (source.preferredDuringSchedulingIgnoredDuringExecution !== undefined) {
    out['preferredDuringSchedulingIgnoredDuringExecution'] = source.preferredDuringSchedulingIgnoredDuringExecution.map((p) => ({
      weight: p.weight,
      podAffinityTerm: p.virtualMachineAndPodAffinityTerm,
    }));
  }
  return out;
}
