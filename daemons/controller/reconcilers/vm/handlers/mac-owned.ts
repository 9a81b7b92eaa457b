/**
 * The VirtualMachineMACAddresses the controller makes for a VM's additional networks that name none:
 * how they are named and labelled, and which network gets which (pure; `mac.ts` does the writes).
 */
import { createHash } from 'node:crypto';
import { API_VERSION } from '../../../../../shared/api/resources/common.js';
import type { VirtualMachineMACAddress } from '../../../../../shared/api/resources/addresses.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { ownerReferenceTo } from '../../../../../shared/kube/index.js';
import { VM_UID_LABEL } from './ipam.js';

type NetworkRef = NonNullable<VirtualMachine['spec']['networks']>[number];

/** The indexes (in spec.networks) of the additional networks that name no address. */
export function unnamedNetworks(vm: VirtualMachine): number[] {
  return (vm.spec.networks ?? []).flatMap((n, i) => (n.type !== 'Main' && n.virtualMachineMACAddressName === undefined ? [i] : []));
}

/** Whether the controller made this address for this VM: the VM's uid label and its controller reference. */
export function madeFor(vmmac: VirtualMachineMACAddress, vm: Pick<VirtualMachine, 'metadata'>): boolean {
  const uid = vm.metadata.uid;
  return uid !== undefined && vmmac.metadata.labels?.[VM_UID_LABEL] === uid && ownerVM(vmmac)?.uid === uid;
}

/** The VM that controls a controller-made address (its controller reference agreeing with its uid label). */
export function ownerVM(vmmac: VirtualMachineMACAddress): { name: string; uid: string } | undefined {
  const ref = vmmac.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'VirtualMachine');
  if (ref === undefined || vmmac.metadata.labels?.[VM_UID_LABEL] !== ref.uid) return undefined;
  return { name: ref.name, uid: ref.uid };
}

/**
 * The name of the `slot`-th address made for a VM: `<vm>-<6 hex of sha256(uid/slot)>`. Deterministic
 * (as the VM's own IP address), so a stale cache or a new leader finds it instead of making another.
 */
export function ownedMacName(vm: VirtualMachine, slot: number): string {
  const hash = createHash('sha256')
    .update(`${vm.metadata.uid ?? ''}/mac/${slot}`)
    .digest('hex')
    .slice(0, 6);
  return `${(vm.metadata.name ?? '').slice(0, 240)}-${hash}`;
}

/** A new address for the VM: no asked address (the MAC reconciler generates one), owned by the VM. */
export function newOwnedMac(vm: VirtualMachine, name: string): VirtualMachineMACAddress {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineMACAddress',
    metadata: {
      name,
      namespace: vm.metadata.namespace,
      labels: { [VM_UID_LABEL]: vm.metadata.uid ?? '' },
      ownerReferences: [{ ...ownerReferenceTo(vm, { controller: true, blockOwnerDeletion: true }) }],
    },
    spec: {},
  };
}

/** The names of the `count` addresses to make next: the lowest slots whose name is not taken. */
export function namesToMake(vm: VirtualMachine, taken: ReadonlySet<string>, count: number): string[] {
  const out: string[] = [];
  for (let slot = 0; out.length < count; slot++) {
    const name = ownedMacName(vm, slot);
    if (!taken.has(name)) out.push(name);
  }
  return out;
}

const sameNetwork = (a: { type: string; name?: string | undefined }, b: NetworkRef): boolean => a.type === b.type && (a.name ?? '') === (b.name ?? '');

/**
 * Which owned address each unnamed network gets, as the original keeps them: the one `status.networks`
 * already shows for that network, else the next free one (oldest first). Networks left without one
 * (fewer addresses than networks) are absent from the map.
 */
export function assignOwned(vm: VirtualMachine, owned: readonly VirtualMachineMACAddress[]): Map<number, VirtualMachineMACAddress> {
  const networks = vm.spec.networks ?? [];
  const byName = new Map(owned.map((m) => [m.metadata.name ?? '', m]));
  const used = new Set<string>();
  const out = new Map<number, VirtualMachineMACAddress>();
  const unnamed = unnamedNetworks(vm);
  for (const i of unnamed) {
    const net = networks[i];
    if (net === undefined) continue;
    const shown = (vm.status?.networks ?? []).find((st) => sameNetwork(st, net) && !used.has(st.virtualMachineMACAddressName ?? ''));
    const kept = byName.get(shown?.virtualMachineMACAddressName ?? '');
    if (kept !== undefined) {
      out.set(i, kept);
      used.add(kept.metadata.name ?? '');
    }
  }
  const free = [...owned]
    .filter((m) => !used.has(m.metadata.name ?? ''))
    .sort(
      (a, b) =>
        (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
    );
  for (const i of unnamed) {
    if (out.has(i)) continue;
    const next = free.shift();
    if (next === undefined) break;
    out.set(i, next);
  }
  return out;
}
