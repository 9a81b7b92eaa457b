import { describe, expect, it } from '@jest/globals';
import type { Pod } from '../../../kube/resources.js';
import { NETWORKS_STATUS_ANNOTATION, networkProblems } from './network.js';

const pod = (name: string, phase: string, status?: string): Pod => ({
  metadata: { name, namespace: 'ns', ...(status === undefined ? {} : { annotations: { [NETWORKS_STATUS_ANNOTATION]: status } }) },
  status: { phase },
});

const iface = (name: string, ...conditions: { status: string; message: string }[]): unknown => ({ type: 'Network', name, ifName: 'veth_n1', conditions });

describe('NetworkReady from the launcher pods (SDN enabled)', () => {
  it('waits for a pod, then for the SDN module to answer', () => {
    expect(networkProblems([])).toBe('Waiting for the pod to be created.');
    expect(networkProblems([pod('p', 'Pending')])).toBe('Waiting for virt-launcher pod to start');
    expect(networkProblems([pod('p', 'Running')])).toBe('Cannot determine the status of additional interfaces, waiting for a response from the SDN module');
  });

  it('is ready when every interface condition is True, and ignores finished pods', () => {
    const ok = JSON.stringify([iface('lan', { status: 'True', message: '' })]);
    expect(networkProblems([pod('p', 'Running', ok), pod('old', 'Succeeded')])).toBe('');
  });

  it('names every interface condition that is not True, per pod and interface', () => {
    const bad = JSON.stringify([
      iface('lan', { status: 'False', message: 'no VLAN' }, { status: 'Unknown', message: 'no link' }),
      iface('ok', { status: 'True', message: '' }),
    ]);
    expect(networkProblems([pod('p1', 'Running', bad), pod('p2', 'Pending')])).toBe('[p1]: (lan): no VLAN; no link. Waiting for virt-launcher pod to start');
  });

  it('says an annotation that is not the SDN module’s JSON is not valid, naming the pod and the problem', () => {
    expect(networkProblems([pod('p', 'Running', '{not json')])).toMatch(/^\[p\]: annotation network\.deckhouse\.io\/networks-status is not valid: .+/);
    expect(networkProblems([pod('p', 'Running', '{"name":"lan"}')])).toMatch(
      /^\[p\]: annotation network\.deckhouse\.io\/networks-status is not valid: \(root\): /,
    );
  });
});
