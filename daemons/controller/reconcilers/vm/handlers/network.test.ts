import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachine } from '../../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import type { Pod } from '../../../kube/resources.js';
import { NETWORKS_STATUS_ANNOTATION, networkProblems, networksStatus } from './network.js';

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

describe('status.networks as the original writes it', () => {
  const vm = (networks?: VirtualMachine['spec']['networks']): VirtualMachine =>
    vmOf({ namespace: 'ns', id: 'unit' }, 'web', 'generic', networks === undefined ? {} : { networks });
  const kvvmWith = (...macs: string[]): InternalVirtualMachine =>
    ({
      spec: { template: { spec: { domain: { devices: { interfaces: macs.map((m) => ({ name: m, macAddress: m })) } } } } },
    }) as unknown as InternalVirtualMachine;

  it.each<[string, VirtualMachine['spec']['networks']]>([
    ['no networks listed', undefined],
    ['an empty list', []],
    ['only Main without an id', [{ type: 'Main' }]],
    ['only Main with id 1', [{ type: 'Main', id: 1 }]],
  ])('a VM with %s shows the Main network with id 1 and the name default', (_what, networks) => {
    expect(networksStatus({ obj: vm(networks) })).toEqual([{ id: 1, type: 'Main', name: 'default' }]);
  });

  it('lists Main and each additional network in spec order, with ids, the MAC on the interface and the address object', () => {
    const s = {
      obj: vm([
        { type: 'Main', id: 1 },
        { type: 'Network', name: 'lan', id: 2 },
        { type: 'ClusterNetwork', name: 'wan', id: 3 },
      ]),
      kvvm: kvvmWith('02:00:00:00:00:01'),
      macs: new Map([
        [1, '02:00:00:00:00:01'],
        [2, '02:00:00:00:00:02'],
      ]),
      macNames: new Map([
        [1, 'web-a'],
        [2, 'web-b'],
      ]),
    };
    expect(networksStatus(s)).toEqual([
      { id: 1, type: 'Main', name: 'default' },
      { id: 2, type: 'Network', name: 'lan', macAddress: '02:00:00:00:00:01', virtualMachineMACAddressName: 'web-a' },
      // Its MAC is leased but not on the internal VM's interface yet: no macAddress shown.
      { id: 3, type: 'ClusterNetwork', name: 'wan', virtualMachineMACAddressName: 'web-b' },
    ]);
  });

  it('a VM with additional networks and no Main shows no Main entry', () => {
    expect(networksStatus({ obj: vm([{ type: 'Network', name: 'lan' }]) })).toEqual([{ type: 'Network', name: 'lan' }]);
  });
});
