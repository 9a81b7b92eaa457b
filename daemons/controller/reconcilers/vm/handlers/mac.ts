import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import type { VirtualMachineMACAddress } from '../../../../../shared/api/resources/addresses.js';
import type { Handler, HandlerContext } from '../../../engine/reconciler.js';
import { condition, dropCondition, type VMState } from '../state.js';

const MacReady = VMCondition.MACAddressReady;

/** How the VM handlers look a VirtualMachineMACAddress up (the MAC reconcilers' cache). */
export type MacLookup = (namespace: string | undefined, name: string) => VirtualMachineMACAddress | undefined;

/** Why a named address cannot be used yet, in the original's words; undefined when it is this VM's. */
export function macProblem(vmName: string, name: string, vmmac: VirtualMachineMACAddress | undefined): string | undefined {
  if (vmmac === undefined || vmmac.metadata.deletionTimestamp !== undefined)
    return `The requested MAC address (${name}) for the virtual machine not found: waiting for the MAC address`;
  const holder = vmmac.status?.virtualMachineName;
  if (holder !== undefined && holder !== '' && holder !== vmName)
    return `The requested MAC address (${name}) attached to VirtualMachine '${holder}': waiting for the MAC address`;
  if (vmmac.status?.address === undefined || vmmac.status.address === '') return `VirtualMachineMACAddress ${name}: waiting for MAC address binding`;
  return undefined;
}

/**
 * The MAC addresses of the VM's additional networks (Network, ClusterNetwork) that name a
 * VirtualMachineMACAddress: each must exist, be bound and not be attached to another VM, else the VM
 * waits (no internal VM) with `VirtualMachineMACAddressReady=False` naming why; once all are, the
 * condition is True and `s.macs` holds them for the interfaces. Without such networks the condition is
 * absent. Addresses made by the controller for unnamed additional networks are not built.
 */
export function macHandler(lookup: MacLookup | undefined): Handler<VMState> {
  return {
    name: 'macAddresses',
    handle(s, ctx: HandlerContext): void {
      const vm = s.obj;
      if (vm.metadata.deletionTimestamp !== undefined) return;
      const named = (vm.spec.networks ?? []).flatMap((n, i) =>
        n.type !== 'Main' && n.virtualMachineMACAddressName !== undefined ? [{ index: i, name: n.virtualMachineMACAddressName }] : [],
      );
      if (named.length === 0 || lookup === undefined) return dropCondition(s, MacReady.type);
      const problems: string[] = [];
      const macs = new Map<number, string>();
      for (const { index, name } of named) {
        const vmmac = lookup(vm.metadata.namespace, name);
        const problem = macProblem(vm.metadata.name ?? '', name, vmmac);
        if (problem !== undefined) problems.push(problem);
        else macs.set(index, vmmac?.status?.address ?? '');
      }
      if (problems.length > 0) {
        const message = problems.join('; ');
        s.waitingFor.push(message);
        return condition(s, ctx, { type: MacReady.type, status: 'False', reason: MacReady.reason.VirtualMachineMACAddressNotReady, message });
      }
      s.macs = macs;
      condition(s, ctx, { type: MacReady.type, status: 'True', reason: MacReady.reason.VirtualMachineMACAddressReady });
    },
  };
}
