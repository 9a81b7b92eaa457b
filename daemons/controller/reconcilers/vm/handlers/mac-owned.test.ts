import { describe, expect, it } from '@jest/globals';
import type { VirtualMachineMACAddress } from '../../../../../shared/api/resources/addresses.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import { VM_UID_LABEL } from './ipam.js';
import { assignOwned, madeFor, namesToMake, newOwnedMac, ownedMacName, ownerVM, unnamedNetworks } from './mac-owned.js';

const scope = { namespace: 'ns', id: 'unit' };
type Networks = VirtualMachine['spec']['networks'];

function vm(networks: Networks, statusNetworks?: NonNullable<VirtualMachine['status']>['networks']): VirtualMachine {
  const v = vmOf(scope, 'web', 'generic', { networks });
  return { ...v, metadata: { ...v.metadata, uid: 'vm-uid' }, ...(statusNetworks ? { status: { networks: statusNetworks } } : {}) };
}

const owned = (name: string, created: string, address?: string): VirtualMachineMACAddress => {
  const m = newOwnedMac(vm([]), name);
  return { ...m, metadata: { ...m.metadata, creationTimestamp: created }, ...(address ? { status: { address } } : {}) };
};

describe('addresses the controller makes for unnamed additional networks', () => {
  const nets: Networks = [
    { type: 'Main' },
    { type: 'Network', name: 'a' },
    { type: 'ClusterNetwork', name: 'b', virtualMachineMACAddressName: 'x' },
    { type: 'Network', name: 'c' },
  ];

  it('counts only the additional networks that name no address', () => {
    expect(unnamedNetworks(vm(nets))).toEqual([1, 3]);
    expect(unnamedNetworks(vm([{ type: 'Main' }]))).toEqual([]);
  });

  it('names them deterministically per VM and slot, and makes the lowest free slots', () => {
    expect(ownedMacName(vm(nets), 0)).toMatch(/^web-[0-9a-f]{6}$/);
    expect(ownedMacName(vm(nets), 0)).toBe(ownedMacName(vm(nets), 0));
    expect(ownedMacName(vm(nets), 0)).not.toBe(ownedMacName(vm(nets), 1));
    const taken = new Set([ownedMacName(vm(nets), 0)]);
    expect(namesToMake(vm(nets), taken, 2)).toEqual([ownedMacName(vm(nets), 1), ownedMacName(vm(nets), 2)]);
  });

  it('labels them with the VM uid and makes the VM their controller; another VM’s or a hand-made one is not its', () => {
    const m = newOwnedMac(vm(nets), 'web-abc');
    expect(m.metadata.labels).toEqual({ [VM_UID_LABEL]: 'vm-uid' });
    expect(m.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'VirtualMachine', name: 'web', uid: 'vm-uid', controller: true, blockOwnerDeletion: true });
    expect(m.spec).toEqual({});
    expect(madeFor(m, vm(nets))).toBe(true);
    expect(ownerVM(m)).toEqual({ name: 'web', uid: 'vm-uid' });
    const other = { ...vm(nets), metadata: { ...vm(nets).metadata, uid: 'other' } };
    expect(madeFor(m, other)).toBe(false);
    const relabelled = { ...m, metadata: { ...m.metadata, labels: { [VM_UID_LABEL]: 'forged' } } };
    expect(ownerVM(relabelled)).toBeUndefined();
  });

  it('gives each unnamed network the oldest free address, and keeps the one status.networks shows', () => {
    const first = owned('web-1', '2026-01-01T00:00:00Z', '02:00:00:00:00:01');
    const second = owned('web-2', '2026-01-01T00:00:01Z', '02:00:00:00:00:02');
    const fresh = assignOwned(vm(nets), [second, first]);
    expect([...fresh].map(([i, m]) => [i, m.metadata.name])).toEqual([
      [1, 'web-1'],
      [3, 'web-2'],
    ]);
    const shown = vm(nets, [{ type: 'Network', name: 'c', virtualMachineMACAddressName: 'web-1' }]);
    expect([...assignOwned(shown, [first, second])].map(([i, m]) => [i, m.metadata.name])).toEqual([
      [3, 'web-1'],
      [1, 'web-2'],
    ]);
  });

  it('leaves a network without an address when there are fewer addresses than networks', () => {
    const only = owned('web-1', '2026-01-01T00:00:00Z');
    expect([...assignOwned(vm(nets), [only]).keys()]).toEqual([1]);
    expect(assignOwned(vm(nets), []).size).toBe(0);
  });
});
