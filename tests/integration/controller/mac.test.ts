import { describe, expect, it } from '@jest/globals';
import { API_VERSION } from '../../../shared/api/resources/common.js';
import type { VirtualMachineMACAddress } from '../../../shared/api/resources/addresses.js';
import { eventually, gone, macAddresses as macs, macLeases as leases } from './fixtures.js';
import { useWorld } from './world.js';

// The OUI of this cluster UUID: its first byte with a low hex digit of 2, 6, a or e, and the two after.
const t = useWorld('ctl-mac', { env: { CLUSTER_UUID: '0f12ab34-5c6d-4e7f-8a9b-0c1d2e3f4a5b', DEPENDENCY_RECHECK_INTERVAL: '500ms' } });

const vmmac = (name: string, address?: string): VirtualMachineMACAddress => ({
  apiVersion: API_VERSION,
  kind: 'VirtualMachineMACAddress',
  metadata: { name, namespace: t.w.ns },
  spec: address === undefined ? {} : { address },
});

const bound = (v: VirtualMachineMACAddress): { status: string; reason: string; message: string } | undefined =>
  v.status?.conditions?.find((c) => c.type === 'Bound');

async function macWhen(name: string, check: (v: VirtualMachineMACAddress) => boolean, what: string): Promise<VirtualMachineMACAddress> {
  const client = macs();
  return eventually(async () => {
    const v = await client.get({ namespace: t.w.ns, name });
    return check(v) && v;
  }, `${name}: ${what}`);
}

describe('VirtualMachineMACAddress', () => {
  it('gets a generated address of the cluster OUI, held by a lease named after it', async () => {
    const created = await macs().create(vmmac('auto'));
    const got = await macWhen('auto', (v) => v.status?.phase === 'Bound', 'Bound');
    expect(got.status?.address).toMatch(/^12:ab:34(:[0-9a-f]{2}){3}$/);
    expect(bound(got)).toMatchObject({ status: 'True', reason: 'Bound' });
    expect(got.status?.conditions?.find((c) => c.type === 'Attached')).toMatchObject({ status: 'False', reason: 'VirtualMachineNotFound' });
    expect(got.metadata.finalizers).toContain('virtualization.deckhouse.io/vmmac-cleanup');
    const leaseName = `mac-${(got.status?.address ?? '').replaceAll(':', '-')}`;
    const lease = await eventually(async () => {
      const l = await leases().get({ name: leaseName });
      return l.status?.phase === 'Bound' && l;
    }, 'lease Bound');
    expect(lease.spec.virtualMachineMACAddressRef).toEqual({ name: 'auto', namespace: t.w.ns });
    expect(lease.metadata.labels?.['virtualization.deckhouse.io/virtual-machine-mac-address-uid']).toBe(created.metadata.uid);
    expect(lease.metadata.finalizers).toContain('virtualization.deckhouse.io/vmmacl-cleanup');

    await macs().delete({ namespace: t.w.ns, name: 'auto' });
    await eventually(() => gone(() => leases().get({ name: leaseName })), 'lease freed with its address');
  });

  it('takes the asked address; a second address asking for it waits, naming the holder, and binds once it is free', async () => {
    await macs().create(vmmac('first', 'AA-BB-CC-00-11-22'));
    const first = await macWhen('first', (v) => v.status?.phase === 'Bound', 'Bound');
    expect(first.status?.address).toBe('aa:bb:cc:00:11:22');
    await macs().create(vmmac('second', 'aa:bb:cc:00:11:22'));
    const waiting = await macWhen('second', (v) => bound(v)?.status === 'False', 'refused');
    expect(bound(waiting)).toMatchObject({
      reason: 'VirtualMachineMACAddressLeaseAlreadyExists',
      message: `MAC address aa:bb:cc:00:11:22 is already leased to VirtualMachineMACAddress ${t.w.ns}/first`,
    });
    expect(waiting.status?.phase).toBe('Pending');
    await macs().delete({ namespace: t.w.ns, name: 'first' });
    const second = await macWhen('second', (v) => v.status?.phase === 'Bound', 'Bound once free');
    expect(second.status?.address).toBe('aa:bb:cc:00:11:22');
  });

  it('refuses a malformed address at the apiserver, naming the field', async () => {
    await expect(macs().create(vmmac('bad', 'zz:bb:cc:00:11:22'))).rejects.toThrow(/spec\.address/);
  });
});
