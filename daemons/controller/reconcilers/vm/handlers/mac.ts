import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import type { VirtualMachineMACAddress } from '../../../../../shared/api/resources/addresses.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import type { InternalVirtualMachine } from '../../../../../shared/api/internal/resources.js';
import type { Deps } from '../../../deps.js';
import type { Handler, HandlerContext } from '../../../engine/reconciler.js';
import { condition, dropCondition, type VMState } from '../state.js';
import { assignOwned, namesToMake, newOwnedMac, unnamedNetworks } from './mac-owned.js';

const MacReady = VMCondition.MACAddressReady;

/** How the VM handlers read and make VirtualMachineMACAddresses (the MAC reconcilers' cache and client). */
export interface MacPort {
  get(namespace: string | undefined, name: string): VirtualMachineMACAddress | undefined;
  /** The addresses labelled with this VM's uid (made for it by the controller), deleting ones included. */
  ownedBy(vm: VirtualMachine): VirtualMachineMACAddress[];
  /** Create an address (remembered in the cache at once); false when one of that name already exists. */
  create(vmmac: VirtualMachineMACAddress, signal: AbortSignal): Promise<boolean>;
  /** Delete an address; one already gone is fine. */
  delete(namespace: string | undefined, name: string, signal: AbortSignal): Promise<void>;
}

/** Why a named address cannot be used yet, in the original's words; undefined when it is this VM's. */
export function macProblem(vmName: string, name: string, vmmac: VirtualMachineMACAddress | undefined): string | undefined {
  if (vmmac === undefined || vmmac.metadata.deletionTimestamp !== undefined)
    return `The requested MAC address (${name}) for the virtual machine not found: waiting for the MAC address`;
  const holder = vmmac.status?.virtualMachineName;
  if (holder !== undefined && holder !== '' && holder !== vmName)
    return `The requested MAC address (${name}) attached to VirtualMachine '${holder}': waiting for the MAC address`;
  return bindingWait(name, vmmac);
}

/**
 * An address not bound yet, in the original's words, with the address's own reason when it says one
 * (the pool exhausted, the asked MAC leased elsewhere), so the VM tells what it waits for.
 */
function bindingWait(name: string, vmmac: VirtualMachineMACAddress): string | undefined {
  if (vmmac.status?.address !== undefined && vmmac.status.address !== '') return undefined;
  const bound = vmmac.status?.conditions?.find((c) => c.type === 'Bound');
  const why = bound?.status === 'False' && bound.message !== undefined && bound.message !== '' ? ` (${bound.message})` : '';
  return `VirtualMachineMACAddress ${name}: waiting for MAC address binding${why}`;
}

/** Why an address the controller made for the VM cannot be used yet, in the original's words. */
export function ownedMacProblem(vmName: string, vmmac: VirtualMachineMACAddress): string | undefined {
  const name = vmmac.metadata.name ?? '';
  const holder = vmmac.status?.virtualMachineName;
  if (holder !== undefined && holder !== '' && holder !== vmName)
    return `The requested VirtualMachineMACAddress (${name}) attached to VirtualMachine '${holder}': please remove VirtualMachine '${holder}' or reconfigure it`;
  return bindingWait(name, vmmac);
}

/** The original makes addresses only for a VM that is not running (Pending or Stopped). */
const mayMake = (s: VMState): boolean => s.status.phase === undefined || s.status.phase === 'Pending' || s.status.phase === 'Stopped';

/**
 * The MAC addresses of the VM's additional networks (Network, ClusterNetwork). A network naming a
 * VirtualMachineMACAddress takes that one: it must exist, be bound and not be attached to another VM.
 * For each network naming none the controller makes one (labelled with the VM's uid, owned by the VM;
 * only while the VM is Pending or Stopped, as the original), the MAC reconcilers lease it, and the
 * network keeps it (`status.networks`). Until all are ready the VM waits (no internal VM) with
 * `VirtualMachineMACAddressReady=False` naming why; then the condition is True and `s.macs` holds them
 * for the interfaces. An address it made that no network takes any more is deleted once the internal
 * VM's interfaces no longer carry it. Without additional networks the condition is absent.
 */
export function macHandler(deps: Deps, port: MacPort | undefined): Handler<VMState> {
  return {
    name: 'macAddresses',
    async handle(s, ctx: HandlerContext): Promise<void> {
      const vm = s.obj;
      if (vm.metadata.deletionTimestamp !== undefined) return;
      if (port === undefined) return dropCondition(s, MacReady.type);
      const unnamed = unnamedNetworks(vm);
      const owned = port.ownedBy(vm);
      const assigned = assignOwned(vm, owned);
      await dropUnused(port, deps.caches.kvvms.get(s.key), owned, new Set([...assigned.values()]), ctx);
      const additional = (vm.spec.networks ?? []).filter((n) => n.type !== 'Main').length;
      if (additional === 0) return dropCondition(s, MacReady.type);
      const problems: string[] = [];
      const macs = new Map<number, string>();
      const names = new Map<number, string>();
      let present = 0;
      (vm.spec.networks ?? []).forEach((n, index) => {
        const name = n.virtualMachineMACAddressName;
        if (n.type === 'Main' || name === undefined) return;
        const vmmac = port.get(vm.metadata.namespace, name);
        if (vmmac !== undefined) present++;
        const problem = macProblem(vm.metadata.name ?? '', name, vmmac);
        if (problem !== undefined) problems.push(problem);
        else macs.set(index, vmmac?.status?.address ?? '');
        names.set(index, name);
      });
      if (owned.length < unnamed.length) {
        if (!mayMake(s)) {
          // A running VM keeps what it has; the new network waits for it to stop, as in the original.
          s.macs = macs;
          s.macNames = names;
          return;
        }
        const taken = new Set(owned.map((m) => m.metadata.name ?? ''));
        for (const name of namesToMake(vm, taken, unnamed.length - owned.length)) {
          if (await port.create(newOwnedMac(vm, name), ctx.signal)) ctx.log.info({ vmmac: name }, 'created VirtualMachineMACAddress');
        }
        const message = `Waiting for the MAC address to be created ${present + owned.length}/${additional}`;
        s.waitingFor.push(message);
        return condition(s, ctx, { type: MacReady.type, status: 'False', reason: MacReady.reason.VirtualMachineMACAddressNotReady, message });
      }
      for (const [index, vmmac] of assigned) {
        const problem = ownedMacProblem(vm.metadata.name ?? '', vmmac);
        if (problem !== undefined) problems.push(problem);
        else macs.set(index, vmmac.status?.address ?? '');
        names.set(index, vmmac.metadata.name ?? '');
      }
      if (problems.length > 0) {
        const message = problems.join('; ');
        s.waitingFor.push(message);
        return condition(s, ctx, { type: MacReady.type, status: 'False', reason: MacReady.reason.VirtualMachineMACAddressNotReady, message });
      }
      s.macs = macs;
      s.macNames = names;
      condition(s, ctx, { type: MacReady.type, status: 'True', reason: MacReady.reason.VirtualMachineMACAddressReady });
    },
  };
}

/**
 * Delete the addresses made for this VM that no network takes any more (a network was removed) once
 * the internal VM's interfaces do not carry them: what the original's MAC controller does when such an
 * address stops being attached.
 */
async function dropUnused(
  port: MacPort,
  kvvm: InternalVirtualMachine | undefined,
  owned: readonly VirtualMachineMACAddress[],
  kept: ReadonlySet<VirtualMachineMACAddress>,
  ctx: HandlerContext,
): Promise<void> {
  const carried = new Set((kvvm?.spec.template.spec?.domain.devices?.interfaces ?? []).map((i) => i.macAddress));
  for (const vmmac of owned) {
    if (kept.has(vmmac) || vmmac.metadata.deletionTimestamp !== undefined) continue;
    const address = vmmac.status?.address;
    if (address !== undefined && carried.has(address)) continue;
    await port.delete(vmmac.metadata.namespace, vmmac.metadata.name ?? '', ctx.signal);
    ctx.log.info({ vmmac: vmmac.metadata.name }, 'deleted VirtualMachineMACAddress no network uses');
  }
}
