import { Finalizer } from '../../../../shared/api/finalizers.js';
import { API_VERSION } from '../../../../shared/api/resources/common.js';
import type { VirtualMachineIPAddress, VirtualMachineIPAddressLease } from '../../../../shared/api/resources/addresses.js';
import { AlreadyExistsError } from '../../../../shared/errors/index.js';
import type { Deps } from '../../deps.js';
import { Expectations } from '../../engine/expectations.js';
import { ipToLeaseName, parseIPv4 } from '../../../../shared/api/ipv4.js';
import { isAssignable, nextFree, rangesOf, type FreeAddress } from './cidr.js';

/** Label on a lease: the uid of the VirtualMachineIPAddress holding it. */
export const VMIP_UID_LABEL = 'virtualization.deckhouse.io/virtual-machine-ip-address-uid';

/** The outcome of taking an address for a VirtualMachineIPAddress. */
export type Allocation =
  { ok: true; lease: VirtualMachineIPAddressLease } | { ok: false; reason: 'OutOfRange' | 'AlreadyExists' | 'Exhausted' | 'Off'; message: string };

/** How many taken-meanwhile addresses an Auto allocation skips before it gives up for this pass. */
const MAX_ATTEMPTS = 32;

/** Whether a lease is held for this address object (by its ref, and by its uid label when set). */
export function leaseHeldBy(lease: VirtualMachineIPAddressLease, vmip: VirtualMachineIPAddress): boolean {
  const ref = lease.spec.virtualMachineIPAddressRef;
  if (ref?.name !== vmip.metadata.name || ref?.namespace !== vmip.metadata.namespace) return false;
  const uid = lease.metadata.labels?.[VMIP_UID_LABEL];
  return uid === undefined || uid === vmip.metadata.uid;
}

/**
 * Take an address: Static asks for spec.staticIP, Auto for the address it had before or the first free
 * one in CIDR order. The lease name is the lock: creating `ip-a-b-c-d` fails when another holds it. A
 * Released lease of the same namespace is taken over.
 */
export class Allocator {
  /** Addresses this process saw taken but its cache may not show yet (the cache covers them soon). */
  private readonly taken = new Expectations<true>(30_000);
  /**
   * Where the next Auto scan starts, so that handing out n addresses costs O(n), not O(n²): every
   * address before `position` (in CIDR order) had a lease in the cache when a scan passed it, and
   * none can have become free while no lease left the cache (`removals` unchanged) and the CIDRs
   * are the same. Any removal sends the scan back to the first address, so the first free address in
   * CIDR order is still the one taken.
   */
  private scanned: { cidrs: string; removals: number; position: number } | undefined;

  constructor(private readonly deps: Deps) {}

  async allocate(vmip: VirtualMachineIPAddress, signal: AbortSignal): Promise<Allocation> {
    const ranges = rangesOf(this.deps.cidrs.current());
    if (ranges.length === 0) return { ok: false, reason: 'Off', message: 'IP address management is off: no virtualMachineCIDRs are configured' };
    if (vmip.spec.type === 'Static') {
      const ip = vmip.spec.staticIP ?? '';
      if (!isAssignable(parseIPv4(ip) ?? -1, ranges))
        return { ok: false, reason: 'OutOfRange', message: `${ip} is not an assignable address of virtualMachineCIDRs` };
      return this.take(vmip, ip, signal);
    }
    const previous = vmip.status?.address;
    if (previous !== undefined && isAssignable(parseIPv4(previous) ?? -1, ranges) && !this.isTaken(previous)) {
      const again = await this.take(vmip, previous, signal);
      if (again.ok) return again;
    }
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const free = this.firstFree(ranges);
      if (free === undefined) return { ok: false, reason: 'Exhausted', message: 'no free address is left in virtualMachineCIDRs' };
      const result = await this.take(vmip, free.ip, signal);
      if (result.ok || result.reason !== 'AlreadyExists') return result;
    }
    return { ok: false, reason: 'AlreadyExists', message: 'every address tried was taken meanwhile; retrying' };
  }

  /** The first address in CIDR order that is neither leased nor being taken, scanning from `scanned`. */
  private firstFree(ranges: ReturnType<typeof rangesOf>): FreeAddress | undefined {
    const cidrs = ranges.map((r) => r.text).join(',');
    const removals = this.deps.caches.leases.removals;
    const from = this.scanned?.cidrs === cidrs && this.scanned.removals === removals ? this.scanned.position : 0;
    // The scan may move past addresses held only by an expectation (their lease may never come);
    // the next scan starts at the first of those, not behind it.
    let leasedBefore = from;
    const free = nextFree(
      ranges,
      (ip, position) => {
        const leased = this.deps.caches.leases.get(ipToLeaseName(ip)) !== undefined;
        if (leased && position === leasedBefore) leasedBefore = position + 1;
        return leased || this.taken.get(ip) === true;
      },
      from,
    );
    this.scanned = { cidrs, removals, position: leasedBefore };
    return free;
  }

  private isTaken(ip: string): boolean {
    return this.taken.get(ip) === true || this.deps.caches.leases.get(ipToLeaseName(ip)) !== undefined;
  }

  private async take(vmip: VirtualMachineIPAddress, ip: string, signal: AbortSignal): Promise<Allocation> {
    const name = ipToLeaseName(ip);
    const existing = this.deps.caches.leases.get(name);
    if (existing !== undefined) return this.takeOver(vmip, existing, ip, signal);
    // Reserved before the call: concurrent allocations in this process must not pick it too.
    this.taken.set(ip, true);
    try {
      const lease = await this.deps.clients.leases.create(newLease(vmip, name), { signal });
      return { ok: true, lease: this.deps.caches.leases.remember(lease) };
    } catch (err: unknown) {
      if (!(err instanceof AlreadyExistsError)) {
        this.taken.delete(ip);
        throw err;
      }
      return { ok: false, reason: 'AlreadyExists', message: `the address ${ip} is already leased` };
    }
  }

  /** A lease for the address exists: ours already, or Released in our namespace (taken over), or someone else's. */
  private async takeOver(vmip: VirtualMachineIPAddress, lease: VirtualMachineIPAddressLease, ip: string, signal: AbortSignal): Promise<Allocation> {
    if (leaseHeldBy(lease, vmip)) return { ok: true, lease };
    const ref = lease.spec.virtualMachineIPAddressRef;
    const released = (ref?.name ?? '') === '' && lease.metadata.deletionTimestamp === undefined;
    if (!released || ref?.namespace !== vmip.metadata.namespace) {
      return { ok: false, reason: 'AlreadyExists', message: `the address ${ip} is leased by ${ref?.namespace ?? ''}/${ref?.name ?? ''}` };
    }
    const patch = {
      metadata: { resourceVersion: lease.metadata.resourceVersion, labels: { [VMIP_UID_LABEL]: vmip.metadata.uid ?? '' } },
      spec: { virtualMachineIPAddressRef: { namespace: vmip.metadata.namespace, name: vmip.metadata.name } },
    };
    const taken = await this.deps.clients.leases.mergePatch({ name: lease.metadata.name ?? '' }, patch, { signal });
    return { ok: true, lease: this.deps.caches.leases.remember(taken) };
  }
}

function newLease(vmip: VirtualMachineIPAddress, name: string): VirtualMachineIPAddressLease {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineIPAddressLease',
    metadata: { name, labels: { [VMIP_UID_LABEL]: vmip.metadata.uid ?? '' }, finalizers: [Finalizer.vmiplCleanup] },
    spec: { virtualMachineIPAddressRef: { namespace: vmip.metadata.namespace ?? '', name: vmip.metadata.name ?? '' } },
  };
}
