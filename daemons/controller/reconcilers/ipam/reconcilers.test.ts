/**
 * The address and lease reconcilers on their own, over in-memory kinds: each row seeds a world,
 * reconciles the keys it names until nothing more changes, and checks what the apiserver then holds.
 * (tests/integration/controller/ipam.test.ts runs the same behaviour against the real apiserver.)
 */
import { describe, expect, it } from '@jest/globals';
import type { VirtualMachineIPAddress, VirtualMachineIPAddressLease } from '../../../../shared/api/resources/addresses.js';
import { API_VERSION } from '../../../../shared/api/resources/common.js';
import { vm } from '../../../../tests/integration/controller/builders.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { inMemoryDeps } from '../../testing/in-memory.js';
import { VMIP_UID_LABEL } from './allocate.js';
import { leaseReconciler } from './lease/reconciler.js';
import { vmipReconciler } from './vmip/reconciler.js';

const scope = { namespace: 'ns', id: 'unit' };
const signal = new AbortController().signal;

function vmip(name: string, spec: VirtualMachineIPAddress['spec'], extra: Partial<VirtualMachineIPAddress['metadata']> = {}): VirtualMachineIPAddress {
  return { apiVersion: API_VERSION, kind: 'VirtualMachineIPAddress', metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...extra }, spec };
}

function lease(
  ip: string,
  ref: { namespace: string; name: string },
  extra: Partial<VirtualMachineIPAddressLease['metadata']> = {},
): VirtualMachineIPAddressLease {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineIPAddressLease',
    metadata: { name: `ip-${ip.replaceAll('.', '-')}`, finalizers: ['virtualization.deckhouse.io/vmipl-cleanup'], ...extra },
    spec: { virtualMachineIPAddressRef: ref },
  };
}

/** Reconcile a key until a pass changes nothing in the apiserver (at most 5 passes). */
async function settle(reconcile: ReconcileFn, key: string, writes: () => number): Promise<void> {
  for (let pass = 0; pass < 5; pass++) {
    const before = writes();
    await reconcile(key, signal);
    if (writes() === before) return;
  }
  throw new Error(`${key} did not settle in 5 passes`);
}

interface Row {
  what: string;
  cidrs?: string[];
  addresses: VirtualMachineIPAddress[];
  leases?: VirtualMachineIPAddressLease[];
  vms?: ReturnType<typeof vm>[];
  /** The address reconciled. */
  key: string;
  phase: string;
  address?: string | undefined;
  reason?: string;
  vmName?: string;
}

describe('the VirtualMachineIPAddress reconciler', () => {
  it.each<Row>([
    {
      what: 'leases the first free address of the subnet for an Auto address',
      addresses: [vmip('a', { type: 'Auto' })],
      key: 'ns/a',
      phase: 'Bound',
      address: '10.66.0.1',
    },
    {
      what: 'skips an address whose lease another holds',
      addresses: [vmip('a', { type: 'Auto' })],
      leases: [lease('10.66.0.1', { namespace: 'other', name: 'x' })],
      key: 'ns/a',
      phase: 'Bound',
      address: '10.66.0.2',
    },
    {
      what: 'takes the asked address for a Static one',
      addresses: [vmip('s', { type: 'Static', staticIP: '10.66.0.50' })],
      key: 'ns/s',
      phase: 'Bound',
      address: '10.66.0.50',
    },
    {
      what: 'refuses a Static address outside the subnets',
      addresses: [vmip('s', { type: 'Static', staticIP: '192.168.1.1' })],
      key: 'ns/s',
      phase: 'Pending',
      reason: 'VirtualMachineIPAddressIsOutOfTheValidRange',
    },
    {
      what: 'refuses a Static address leased to an address of another namespace',
      addresses: [vmip('s', { type: 'Static', staticIP: '10.66.0.50' })],
      leases: [lease('10.66.0.50', { namespace: 'other', name: 'x' })],
      key: 'ns/s',
      phase: 'Pending',
      reason: 'VirtualMachineIPAddressLeaseAlreadyExists',
    },
    {
      what: 'takes over a Released lease of its own namespace',
      addresses: [vmip('s', { type: 'Static', staticIP: '10.66.0.50' })],
      leases: [lease('10.66.0.50', { namespace: 'ns', name: '' })],
      key: 'ns/s',
      phase: 'Bound',
      address: '10.66.0.50',
    },
    {
      what: 'waits when the subnet is exhausted',
      cidrs: ['10.66.0.0/30'],
      addresses: [vmip('a', { type: 'Auto' })],
      leases: [lease('10.66.0.1', { namespace: 'o', name: 'x' }), lease('10.66.0.2', { namespace: 'o', name: 'y' })],
      key: 'ns/a',
      phase: 'Pending',
      reason: 'VirtualMachineIPAddressLeaseNotReady',
    },
    {
      what: 'is Attached with the VM that names it',
      addresses: [vmip('a', { type: 'Auto' })],
      vms: [vm(scope, 'web', 'generic', { virtualMachineIPAddressName: 'a' })],
      key: 'ns/a',
      phase: 'Attached',
      address: '10.66.0.1',
      vmName: 'web',
    },
  ])('$what', async (row) => {
    const { deps, kinds } = inMemoryDeps({
      cidrs: row.cidrs ?? ['10.66.0.0/24'],
      seed: { vmips: row.addresses, leases: row.leases ?? [], vms: row.vms ?? [] },
    });
    await settle(vmipReconciler(deps), row.key, () => kinds.vmips.calls.length + kinds.leases.calls.length);

    const got = kinds.vmips.stored(row.key);
    expect(got?.metadata.finalizers).toContain('virtualization.deckhouse.io/vmip-cleanup');
    expect(got?.status?.phase).toBe(row.phase);
    expect(got?.status?.address).toBe(row.address);
    if (row.reason !== undefined) expect(got?.status?.conditions?.find((c) => c.type === 'Bound')).toMatchObject({ status: 'False', reason: row.reason });
    expect(got?.status?.virtualMachineName).toBe(row.vmName);
    if (row.address !== undefined) {
      const held = kinds.leases.stored(`ip-${row.address.replaceAll('.', '-')}`);
      expect(held?.spec.virtualMachineIPAddressRef).toEqual({ namespace: 'ns', name: got?.metadata.name });
      expect(held?.metadata.labels?.[VMIP_UID_LABEL]).toBe(got?.metadata.uid);
    }
  });

  it('hands out addresses in CIDR order and gives the lowest freed one next, after a lease is deleted or a create failed', async () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    const { deps, kinds } = inMemoryDeps({
      cidrs: ['10.66.0.0/30', '10.66.1.0/29'],
      seed: { vmips: names.map((n) => vmip(n, { type: 'Auto' })), leases: [lease('10.66.0.1', { namespace: 'other', name: 'x' })] },
    });
    const reconcile = vmipReconciler(deps);
    const addressOf = (name: string): string | undefined => kinds.vmips.stored(`ns/${name}`)?.status?.address;
    const writes = (): number => kinds.vmips.calls.length + kinds.leases.calls.length;
    for (const n of ['a', 'b', 'c']) await settle(reconcile, `ns/${n}`, writes);
    expect(['a', 'b', 'c'].map(addressOf)).toEqual(['10.66.0.2', '10.66.1.1', '10.66.1.2']);

    // Another process deletes its lease of the first address (the watch event reaches the cache).
    await kinds.leases.jsonPatch({ name: 'ip-10-66-0-1' }, [{ op: 'remove', path: '/metadata/finalizers' }]);
    await kinds.leases.delete({ name: 'ip-10-66-0-1' });
    await settle(reconcile, 'ns/d', writes);
    expect(addressOf('d')).toBe('10.66.0.1');

    // A create that fails leaves its address free for the next one.
    kinds.leases.failNext = new Error('connection reset');
    await expect(reconcile('ns/e', signal)).rejects.toThrow('connection reset');
    await settle(reconcile, 'ns/f', writes);
    expect(addressOf('f')).toBe('10.66.1.3');
    await settle(reconcile, 'ns/e', writes);
    expect(addressOf('e')).toBe('10.66.1.4');
  });

  it('keeps a deleting address while a VM still uses it, and lets it go once none does', async () => {
    const { deps, kinds } = inMemoryDeps({
      cidrs: ['10.66.0.0/24'],
      seed: { vmips: [vmip('a', { type: 'Auto' })], vms: [vm(scope, 'web', 'generic', { virtualMachineIPAddressName: 'a' })] },
    });
    const reconcile = vmipReconciler(deps);
    await settle(reconcile, 'ns/a', () => kinds.vmips.calls.length);
    await kinds.vmips.delete({ namespace: 'ns', name: 'a' });

    await reconcile('ns/a', signal);
    expect(kinds.vmips.stored('ns/a')?.metadata.deletionTimestamp).toBeDefined();

    await kinds.vms.delete({ namespace: 'ns', name: 'web' });
    await reconcile('ns/a', signal);
    expect(kinds.vmips.stored('ns/a')).toBeUndefined();
  });
});

describe('the VirtualMachineIPAddressLease reconciler', () => {
  it('is Bound while its address exists', async () => {
    const { deps, kinds } = inMemoryDeps({ seed: { vmips: [vmip('a', { type: 'Auto' })], leases: [lease('10.66.0.1', { namespace: 'ns', name: 'a' })] } });
    await leaseReconciler(deps)('ip-10-66-0-1', signal);
    expect(kinds.leases.stored('ip-10-66-0-1')?.status?.phase).toBe('Bound');
  });

  it('is Released (namespace kept, name cleared) when its address is gone, and kept for the retention period', async () => {
    const { deps, kinds } = inMemoryDeps({ seed: { leases: [lease('10.66.0.1', { namespace: 'ns', name: 'gone' })] } });
    const result = await leaseReconciler(deps)('ip-10-66-0-1', signal);
    const got = kinds.leases.stored('ip-10-66-0-1');
    expect(got?.spec.virtualMachineIPAddressRef).toEqual({ namespace: 'ns', name: '' });
    expect(got?.status?.phase).toBe('Released');
    // Default retention 10 minutes: a look again after it, not a deletion now.
    expect(result?.requeueAfterMs).toBeGreaterThan(9 * 60_000);
    expect(kinds.leases.callsOf('delete')).toHaveLength(0);
  });

  it('deletes a Released lease once retention has passed (here: zero)', async () => {
    const { deps, kinds } = inMemoryDeps({
      env: { VIRTUAL_MACHINE_IP_LEASES_RETENTION_DURATION: '0s' },
      seed: { leases: [lease('10.66.0.1', { namespace: 'ns', name: 'gone' })] },
    });
    const reconcile = leaseReconciler(deps);
    await reconcile('ip-10-66-0-1', signal); // released
    await reconcile('ip-10-66-0-1', signal); // deletion asked; the finalizer holds it
    await reconcile('ip-10-66-0-1', signal); // the finalizer goes: gone
    expect(kinds.leases.stored('ip-10-66-0-1')).toBeUndefined();
  });

  it('refuses the release when the lease moved on meanwhile (the address reconciler took it over)', async () => {
    const { deps, kinds } = inMemoryDeps({ seed: { leases: [lease('10.66.0.1', { namespace: 'ns', name: 'gone' })] } });
    // The cache still shows the old copy when another writer changes the lease.
    const stale = deps.caches.leases.get('ip-10-66-0-1');
    kinds.leases.writeByOther('ip-10-66-0-1', { spec: { virtualMachineIPAddressRef: { namespace: 'ns', name: 'new' } } });
    deps.caches.leases.remember = (o) => o; // keep the decision on the stale copy
    (deps.caches.leases as { get: (k: string) => unknown }).get = () => stale;
    await expect(leaseReconciler(deps)('ip-10-66-0-1', signal)).rejects.toThrow(/has been modified/);
    expect(kinds.leases.stored('ip-10-66-0-1')?.spec.virtualMachineIPAddressRef).toEqual({ namespace: 'ns', name: 'new' });
  });
});
