import { describe, expect, it } from '@jest/globals';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../../../../shared/api/resources/virtualmachineclass.js';
import { placementOf } from './placement.js';

const cls = (spec: Partial<VirtualMachineClass['spec']>): VirtualMachineClass =>
  ({ metadata: {}, spec: { cpu: { type: 'Host' }, ...spec } }) as VirtualMachineClass;
const vm = (spec: Partial<VirtualMachine['spec']>): VirtualMachine => ({ metadata: {}, spec }) as VirtualMachine;
const expr = { key: 'zone', operator: 'In', values: ['a'] };

describe('placement of the internal VM', () => {
  it('merges the class matchLabels and the VM nodeSelector, the VM winning on a shared key', () => {
    const p = placementOf(vm({ nodeSelector: { disk: 'ssd', pool: 'vm' } }), cls({ nodeSelector: { matchLabels: { pool: 'default', gpu: 'no' } } }));
    expect(p.nodeSelector).toEqual({ pool: 'vm', gpu: 'no', disk: 'ssd' });
  });

  it('puts VM tolerations before the class ones', () => {
    const p = placementOf(vm({ tolerations: [{ key: 'a', operator: 'Exists' }] }), cls({ tolerations: [{ key: 'b', operator: 'Exists' }] }));
    expect(p.tolerations?.map((t) => t['key'])).toEqual(['a', 'b']);
  });

  it('adds the class matchExpressions to every required node selector term of the VM', () => {
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'x', operator: 'Exists' }] },
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
          ],
        },
      },
    };
    const p = placementOf(vm({ affinity }), cls({ nodeSelector: { matchExpressions: [expr] } }));
    expect(p.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'x', operator: 'Exists' }, expr] },
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }], matchExpressions: [expr] },
          ],
        },
      },
    });
  });

  it('makes a required term from the class matchExpressions when the VM has none', () => {
    const p = placementOf(vm({}), cls({ nodeSelector: { matchExpressions: [expr] } }));
    expect(p.affinity).toEqual({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [expr] }] } } });
  });

  it('turns VM-and-pod anti-affinity into pod anti-affinity', () => {
    const term = { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'db' } } };
    const p = placementOf(
      vm({
        affinity: {
          virtualMachineAndPodAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, virtualMachineAndPodAffinityTerm: term }] },
        },
      }),
      cls({}),
    );
    expect(p.affinity).toEqual({ podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, podAffinityTerm: term }] } });
  });

  it('sets nothing when neither VM nor class constrains placement', () => {
    expect(placementOf(vm({}), cls({}))).toEqual({});
  });
});
