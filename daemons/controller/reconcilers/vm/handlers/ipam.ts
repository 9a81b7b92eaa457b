import { createHash } from 'node:crypto';
import { Finalizer } from '../../../../../shared/api/finalizers.js';
import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import { API_VERSION } from '../../../../../shared/api/resources/common.js';
import type { VirtualMachineIPAddress } from '../../../../../shared/api/resources/addresses.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { ownerReferenceTo, objectKey } from '../../../../../shared/kube/index.js';
import type { Deps } from '../../../deps.js';
import type { Handler } from '../../../engine/reconciler.js';
import { condition, dropCondition, type VMState } from '../state.js';

const C = VMCondition.IPAddressReady;

/** Index on the address cache: `namespace/name` of the VM that controls the address. */
export const VMIP_BY_OWNER = 'owner';

/** The controlling VM of an address, as an index value. */
export function ownerVMKeys(vmip: VirtualMachineIPAddress): string[] {
  const ref = vmip.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'VirtualMachine');
  return ref === undefined ? [] : [objectKey({ namespace: vmip.metadata.namespace, name: ref.name })];
}

/** Label on a VirtualMachineIPAddress the controller made for a VM: the VM's uid. */
export const VM_UID_LABEL = 'virtualization.deckhouse.io/virtual-machine-uid';

/**
 * The name of the address the controller makes for a VM: `<vm>-<hash of the VM uid>`. Deterministic,
 * so a stale cache or a new leader finds the one already made instead of making a second.
 */
export function autoAddressName(vm: VirtualMachine): string {
  const hash = createHash('sha256')
    .update(vm.metadata.uid ?? '')
    .digest('hex')
    .slice(0, 6);
  return `${(vm.metadata.name ?? '').slice(0, 240)}-${hash}`;
}

/** The address the controller made for this VM, if it exists. */
export function ownedAddressOf(deps: Deps, vm: VirtualMachine): VirtualMachineIPAddress | undefined {
  const vmip = deps.caches.vmips.get(`${vm.metadata.namespace ?? ''}/${autoAddressName(vm)}`);
  return vmip?.metadata.labels?.[VM_UID_LABEL] === vm.metadata.uid ? vmip : undefined;
}

/** Whether the VM sits on the main (cluster pod) network: no networks listed, or Main among them. */
export function usesMainNetwork(vm: VirtualMachine): boolean {
  const networks = vm.spec.networks ?? [];
  return networks.length === 0 || networks.some((n) => n.type === 'Main');
}

/**
 * The main network address: the VirtualMachineIPAddress the spec names, or one the controller makes.
 * The VM waits until it is bound (only when IPAM is on: virtualMachineCIDRs are set).
 */
export function ipamHandler(deps: Deps): Handler<VMState> {
  return {
    name: 'ipam',
    async handle(s, ctx): Promise<void> {
      const vm = s.obj;
      if (deps.cidrs.current().length === 0 || !usesMainNetwork(vm)) {
        dropCondition(s, C.type);
        return;
      }
      const named = vm.spec.virtualMachineIPAddressName;
      const name = named !== undefined && named !== '' ? named : autoAddressName(vm);
      s.status.virtualMachineIPAddressName = name;
      let vmip = deps.caches.vmips.get(objectKey({ namespace: vm.metadata.namespace, name }));
      if (vmip === undefined && name !== named) {
        vmip = deps.caches.vmips.remember(await deps.clients.vmips.create(newAddress(vm, name), { signal: ctx.signal }));
        ctx.log.info({ vmip: name }, 'created VirtualMachineIPAddress');
        // Its binding comes back as an event in moments; the VM's first status is written then.
        s.deferStatus = true;
      }
      const wait = (reason: string, message: string): void => {
        condition(s, ctx, { type: C.type, status: 'False', reason, message });
        s.waitingFor.push(message);
        delete s.status.ipAddress;
      };
      if (vmip === undefined) return wait(C.reason.VirtualMachineIPAddressNotAvailable, `VirtualMachineIPAddress ${name} not found`);
      const holder = vmip.status?.virtualMachineName;
      if (holder !== undefined && holder !== '' && holder !== vm.metadata.name) {
        return wait(C.reason.VirtualMachineIPAddressNotAvailable, `VirtualMachineIPAddress ${name} is used by VirtualMachine ${holder}`);
      }
      const address = vmip.status?.address;
      if (address === undefined || (vmip.status?.phase !== 'Bound' && vmip.status?.phase !== 'Attached')) {
        // Not looked at by the address reconciler yet: its first status (Bound or Pending with the
        // reason) comes back as an event in moments, and the VM's status is written then.
        if (awaitingFirstStatus(vmip, ctx.now, ADDRESS_BINDING_GRACE_MS)) s.deferStatus = true;
        return wait(C.reason.VirtualMachineIPAddressNotReady, `waiting for VirtualMachineIPAddress ${name} to be bound`);
      }
      condition(s, ctx, { type: C.type, status: 'True', reason: C.reason.VirtualMachineIPAddressReady });
      s.status.ipAddress = address;
      s.ipAddress = address;
    },
  };
}

/**
 * How long after an address is made a VM waiting for it may go without a status. Binding takes
 * milliseconds unless the address reconciler has a backlog (1,000 VMs at once: tens of seconds), and
 * an interim status then costs one more write per VM exactly when the apiserver is busiest. A waiting
 * VM is looked at again every DEPENDENCY_RECHECK_INTERVAL, so its status is written at most that much
 * later than this even if the address never answers.
 */
export const ADDRESS_BINDING_GRACE_MS = 30_000;

/**
 * Whether an address is new and has no status yet, so its binding is still on its way. Bounded by
 * age (`withinMs` of its creation by this process's clock): an address whose reconciler never
 * answers gets the VM's waiting status written at a later look (the lifecycle handler requeues a
 * waiting VM). An unknown or future creation time never defers.
 */
export function awaitingFirstStatus(vmip: VirtualMachineIPAddress, now: Date, withinMs: number): boolean {
  if ((vmip.status?.phase ?? '') !== '' || vmip.metadata.deletionTimestamp !== undefined) return false;
  const age = now.getTime() - Date.parse(vmip.metadata.creationTimestamp ?? '');
  return age >= 0 && age < withinMs;
}

function newAddress(vm: VirtualMachine, name: string): VirtualMachineIPAddress {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineIPAddress',
    metadata: {
      name,
      namespace: vm.metadata.namespace,
      labels: { [VM_UID_LABEL]: vm.metadata.uid ?? '' },
      finalizers: [Finalizer.vmipCleanup],
      ownerReferences: [{ ...ownerReferenceTo(vm, { controller: true, blockOwnerDeletion: true }) }],
    },
    spec: { type: 'Auto' },
  };
}
