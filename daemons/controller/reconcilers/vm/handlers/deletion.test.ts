/**
 * The VM deletion handler on its own, over in-memory kinds: vm-cleanup kept on a live VM; on deletion
 * the instance, internal VM and owned address deleted, the VM held until they are gone, device
 * protection released where no other VM needs it, then the finalizer removed.
 */
import { describe, expect, it } from '@jest/globals';
import { Finalizer } from '../../../../../shared/api/finalizers.js';
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { VirtualMachineIPAddress } from '../../../../../shared/api/resources/addresses.js';
import type { VirtualDisk } from '../../../../../shared/api/resources/virtualdisk.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { disk, vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import { handlerContext, inMemoryDeps } from '../../../testing/in-memory.js';
import { initVMState } from '../index.js';
import { deletionHandler } from './deletion.js';
import { VM_UID_LABEL, autoAddressName } from './ipam.js';

const scope = { namespace: 'ns', id: 'unit' };
const refs: VirtualMachine['spec']['blockDeviceRefs'] = [{ kind: 'VirtualDisk', name: 'root' }];
const vm = (deleting: boolean, finalizers: string[] = [Finalizer.vmCleanup]): VirtualMachine => {
  const v = vmOf(scope, 'web', 'generic', { blockDeviceRefs: refs });
  return { ...v, metadata: { ...v.metadata, uid: 'vm-uid', finalizers, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) } };
};
const named = { metadata: { namespace: 'ns', name: 'web' }, spec: {} };
const kvvm = { ...named, apiVersion: 'x/v1', kind: 'InternalVirtualizationVirtualMachine' } as unknown as InternalVirtualMachine;
const kvvmi = { ...named, apiVersion: 'x/v1', kind: 'InternalVirtualizationVirtualMachineInstance' } as unknown as InternalVirtualMachineInstance;
const ownedAddress: VirtualMachineIPAddress = {
  apiVersion: 'virtualization.deckhouse.io/v1alpha2',
  kind: 'VirtualMachineIPAddress',
  metadata: { namespace: 'ns', name: autoAddressName(vm(false)), labels: { [VM_UID_LABEL]: 'vm-uid' } },
  spec: { type: 'Auto' },
};
const rootDisk: VirtualDisk = { ...disk(scope, 'root'), metadata: { ...disk(scope, 'root').metadata, finalizers: [Finalizer.vdProtection] } };

function world(v: VirtualMachine, extra: { kvvm?: boolean; kvvmi?: boolean; vmip?: boolean; otherUser?: boolean } = {}) {
  const other = vmOf(scope, 'other', 'generic', { blockDeviceRefs: refs });
  return inMemoryDeps({
    seed: {
      vms: [v, ...(extra.otherUser === true ? [{ ...other, metadata: { ...other.metadata, uid: 'other-uid' } }] : [])],
      kvvms: extra.kvvm === true ? [kvvm] : [],
      kvvmis: extra.kvvmi === true ? [kvvmi] : [],
      vmips: extra.vmip === true ? [ownedAddress] : [],
      disks: [rootDisk],
    },
  });
}

describe('the VM deletion handler', () => {
  it('puts vm-cleanup on a live VM once and goes on', async () => {
    const { deps, kinds } = world(vm(false, []));
    const cached = (): VirtualMachine => deps.caches.vms.get('ns/web') ?? vm(false, []);
    const outcome = await deletionHandler(deps).handle(initVMState(cached()), handlerContext());
    expect(outcome).toBeUndefined();
    expect(kinds.vms.stored('ns/web')?.metadata.finalizers).toEqual([Finalizer.vmCleanup]);
    await deletionHandler(deps).handle(initVMState(cached()), handlerContext());
    expect(kinds.vms.calls).toHaveLength(1);
  });

  it('writes nothing for a VM created with vm-cleanup already (the defaulting webhook adds it)', async () => {
    const { deps, kinds } = world(vm(false));
    expect(await deletionHandler(deps).handle(initVMState(vm(false)), handlerContext())).toBeUndefined();
    expect(kinds.vms.calls).toEqual([]);
  });

  it('deletes the instance, internal VM and owned address, and holds the VM (Terminating) until they are gone', async () => {
    const { deps, kinds } = world(vm(true), { kvvm: true, kvvmi: true, vmip: true });
    const state = initVMState(vm(true));
    const outcome = await deletionHandler(deps).handle(state, handlerContext());
    expect(outcome).toEqual({ stop: true, requeueAfterMs: 5_000 });
    expect(state.status.phase).toBe('Terminating');
    expect(kinds.kvvmis.stored('ns/web')).toBeUndefined();
    expect(kinds.kvvms.stored('ns/web')).toBeUndefined();
    expect(kinds.vmips.stored(`ns/${ownedAddress.metadata.name ?? ''}`)).toBeUndefined();
    expect(kinds.vms.stored('ns/web')?.metadata.finalizers).toEqual([Finalizer.vmCleanup]);
    expect(state.gone).toBeUndefined();
  });

  it('once they are gone, releases the devices and removes the finalizer (the VM goes)', async () => {
    const { deps, kinds } = world(vm(true));
    const state = initVMState(vm(true));
    const outcome = await deletionHandler(deps).handle(state, handlerContext());
    expect(outcome).toEqual({ stop: true });
    expect(state.gone).toBe(true);
    expect(kinds.disks.stored('ns/root')?.metadata.finalizers ?? []).toEqual([]);
    expect(kinds.vms.stored('ns/web')).toBeUndefined();
  });

  it('keeps the protection of a device another live VM uses', async () => {
    const { deps, kinds } = world(vm(true), { otherUser: true });
    await deletionHandler(deps).handle(initVMState(vm(true)), handlerContext());
    expect(kinds.disks.stored('ns/root')?.metadata.finalizers).toEqual([Finalizer.vdProtection]);
  });

  it('stops the chain without touching anything when vm-cleanup is already gone', async () => {
    const { deps, kinds } = world(vm(true, ['someone-else']), { kvvm: true });
    const outcome = await deletionHandler(deps).handle(initVMState(vm(true, ['someone-else'])), handlerContext());
    expect(outcome).toEqual({ stop: true });
    expect(kinds.kvvms.stored('ns/web')).toBeDefined();
    expect(kinds.vms.calls).toEqual([]);
  });
});
