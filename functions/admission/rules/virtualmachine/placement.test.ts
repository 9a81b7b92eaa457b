/** VirtualMachine placement rules (the pod validators' checks): one conforming and one violating case each. */
import { vm, type VmIn } from '../../testing/objects.js';
import { ruleTable } from '../../testing/rule-table.js';
import { vmWorld } from './fixtures.js';
import { virtualMachineValidator } from './index.js';

type Spec = VmIn['spec'];
const placed = (change: (spec: Spec) => void): VmIn => vm((o) => change(o.spec));
const term = (operator: string, values?: string[]): NonNullable<Spec['affinity']> => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator, values }] }] } },
});
const podTerm = (topologyKey: string, weight = 50): NonNullable<Spec['affinity']> => ({
  virtualMachineAndPodAntiAffinity: {
    preferredDuringSchedulingIgnoredDuringExecution: [
      { weight, virtualMachineAndPodAffinityTerm: { topologyKey, labelSelector: { matchLabels: { app: 'web' } } } },
    ],
  },
});
const spread = (change: (c: NonNullable<Spec['topologySpreadConstraints']>[number]) => void): Spec['topologySpreadConstraints'] => {
  const c = { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' };
  change(c);
  return [c];
};

ruleTable(virtualMachineValidator, vmWorld, [
  {
    rule: 'node selector labels are valid',
    good: { object: placed((s) => void (s.nodeSelector = { 'node-role.kubernetes.io/worker': '' })) },
    bad: { object: placed((s) => void (s.nodeSelector = { 'bad key!': 'x' })) },
    expect: { deny: 'spec.nodeSelector[bad key!]', message: /label key/ },
  },
  {
    rule: 'node affinity operators take the values they need',
    good: { object: placed((s) => void (s.affinity = term('In', ['a']))) },
    bad: { object: placed((s) => void (s.affinity = term('In', []))) },
    expect: {
      deny: 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values',
      message: /non-empty for operator In/,
    },
  },
  {
    rule: 'Gt and Lt compare with one integer',
    good: { object: placed((s) => void (s.affinity = term('Gt', ['3']))) },
    bad: { object: placed((s) => void (s.affinity = term('Lt', ['three']))) },
    expect: {
      deny: 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values',
      message: /single integer/,
    },
  },
  {
    rule: 'node affinity operators are known',
    good: { object: placed((s) => void (s.affinity = term('Exists'))) },
    bad: { object: placed((s) => void (s.affinity = term('Near'))) },
    expect: {
      deny: 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator',
      message: /must be one of/,
    },
  },
  {
    rule: 'affinity weights are from 1 to 100',
    good: { object: placed((s) => void (s.affinity = podTerm('kubernetes.io/hostname', 100))) },
    bad: { object: placed((s) => void (s.affinity = podTerm('kubernetes.io/hostname', 0))) },
    expect: { deny: 'spec.affinity.virtualMachineAndPodAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight', message: /from 1 to 100/ },
  },
  {
    rule: 'affinity terms have a topology key',
    good: { object: placed((s) => void (s.affinity = podTerm('kubernetes.io/hostname'))) },
    bad: { object: placed((s) => void (s.affinity = podTerm(''))) },
    expect: {
      deny: 'spec.affinity.virtualMachineAndPodAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].virtualMachineAndPodAffinityTerm.topologyKey',
      message: /is required/,
    },
  },
  {
    rule: 'tolerations use a known operator',
    good: { object: placed((s) => void (s.tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'vm', effect: 'NoSchedule' }])) },
    bad: { object: placed((s) => void (s.tolerations = [{ key: 'dedicated', operator: 'Maybe', value: 'vm' }])) },
    expect: { deny: 'spec.tolerations[0].operator', message: /Equal or Exists/ },
  },
  {
    rule: 'toleration seconds go with NoExecute',
    good: { object: placed((s) => void (s.tolerations = [{ operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }])) },
    bad: { object: placed((s) => void (s.tolerations = [{ operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 30 }])) },
    expect: { deny: 'spec.tolerations[0].tolerationSeconds', message: /only with effect NoExecute/ },
  },
  {
    rule: 'topology spread skew is positive',
    good: { object: placed((s) => void (s.topologySpreadConstraints = spread(() => undefined))) },
    bad: { object: placed((s) => void (s.topologySpreadConstraints = spread((c) => void (c.maxSkew = 0)))) },
    expect: { deny: 'spec.topologySpreadConstraints[0].maxSkew', message: /greater than 0/ },
  },
  {
    rule: 'topology spread uses a known policy',
    good: { object: placed((s) => void (s.topologySpreadConstraints = spread((c) => void (c.whenUnsatisfiable = 'ScheduleAnyway')))) },
    bad: { object: placed((s) => void (s.topologySpreadConstraints = spread((c) => void (c.whenUnsatisfiable = 'Sometimes')))) },
    expect: { deny: 'spec.topologySpreadConstraints[0].whenUnsatisfiable', message: /DoNotSchedule or ScheduleAnyway/ },
  },
]);
