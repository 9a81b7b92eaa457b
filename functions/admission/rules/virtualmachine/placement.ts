/** VirtualMachine placement, checked the way Kubernetes checks a pod's scheduling fields. */
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { Findings } from '../../decision.js';
import {
  checkLabelMap,
  checkLabelSelector,
  checkNodeRequirement,
  checkSpreadConstraints,
  checkTolerations,
  checkTopologyKey,
  checkWeight,
} from '../../lib/selectors.js';
import { pure, type Check } from '../check.js';

type Affinity = NonNullable<VirtualMachine['spec']['affinity']>;
type PodAffinity = NonNullable<Affinity['virtualMachineAndPodAffinity']>;
type AffinityTerm = NonNullable<PodAffinity['requiredDuringSchedulingIgnoredDuringExecution']>[number];
type NodeAffinity = NonNullable<Affinity['nodeAffinity']>;
type NodeTerm = NonNullable<NodeAffinity['requiredDuringSchedulingIgnoredDuringExecution']>['nodeSelectorTerms'][number];

export const placement: Check<VirtualMachine> = pure('placement fields are valid', ({ object }, out) => {
  const spec = object.spec;
  checkLabelMap(spec.nodeSelector, 'spec.nodeSelector', out);
  checkTolerations(spec.tolerations, 'spec.tolerations', out);
  checkSpreadConstraints(spec.topologySpreadConstraints, 'spec.topologySpreadConstraints', out);
  if (spec.affinity === undefined) return;
  checkNodeAffinity(spec.affinity.nodeAffinity, 'spec.affinity.nodeAffinity', out);
  checkPodAffinity(spec.affinity.virtualMachineAndPodAffinity, 'spec.affinity.virtualMachineAndPodAffinity', out);
  checkPodAffinity(spec.affinity.virtualMachineAndPodAntiAffinity, 'spec.affinity.virtualMachineAndPodAntiAffinity', out);
});

function checkNodeAffinity(affinity: NodeAffinity | undefined, path: string, out: Findings): void {
  const required = affinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (required !== undefined) {
    const at = `${path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`;
    if (required.nodeSelectorTerms.length === 0) out.deny(at, 'must have at least one term');
    required.nodeSelectorTerms.forEach((term, i) => checkNodeTerm(term, `${at}[${i}]`, out));
  }
  affinity?.preferredDuringSchedulingIgnoredDuringExecution?.forEach((p, i) => {
    const at = `${path}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
    checkWeight(p.weight, `${at}.weight`, out);
    checkNodeTerm(p.preference, `${at}.preference`, out);
  });
}

function checkNodeTerm(term: NodeTerm, path: string, out: Findings): void {
  term.matchExpressions?.forEach((r, i) => checkNodeRequirement(r, `${path}.matchExpressions[${i}]`, out));
  term.matchFields?.forEach((r, i) => {
    if (r.key !== 'metadata.name') out.deny(`${path}.matchFields[${i}].key`, 'only metadata.name is supported');
    if ((r.operator === 'In' || r.operator === 'NotIn') && (r.values ?? []).length !== 1) {
      out.deny(`${path}.matchFields[${i}].values`, 'must have exactly one value');
    }
  });
}

function checkPodAffinity(affinity: PodAffinity | undefined, path: string, out: Findings): void {
  affinity?.requiredDuringSchedulingIgnoredDuringExecution?.forEach((t, i) =>
    checkTerm(t, `${path}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`, out),
  );
  affinity?.preferredDuringSchedulingIgnoredDuringExecution?.forEach((p, i) => {
    const at = `${path}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
    checkWeight(p.weight, `${at}.weight`, out);
    checkTerm(p.virtualMachineAndPodAffinityTerm, `${at}.virtualMachineAndPodAffinityTerm`, out);
  });
}

function checkTerm(term: AffinityTerm, path: string, out: Findings): void {
  checkTopologyKey(term.topologyKey, `${path}.topologyKey`, out);
  checkLabelSelector(term.labelSelector, `${path}.labelSelector`, out);
  checkLabelSelector(term.namespaceSelector, `${path}.namespaceSelector`, out);
}
