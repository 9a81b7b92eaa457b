/**
 * MAC addresses the controller makes for a VM's additional networks that name none: made (owned by the
 * VM, labelled with its uid), leased by the MAC reconcilers, put on the internal VM's interface and
 * shown in `status.networks`; deleted with the VM or when its network goes; kept while a user's delete
 * waits for the VM to let go; a VM whose address cannot be leased (the pool exhausted) waits, saying
 * why, and others are unaffected. KubeVirt is the simulator; the SDN module is absent (NetworkReady says so).
 */
import { randomInt } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { API_VERSION } from '../../../shared/api/resources/common.js';
import type { VirtualMachineMACAddress } from '../../../shared/api/resources/addresses.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { eventually, gone, macAddresses as macs, macLeases as leases } from './fixtures.js';
import { phaseIs, useWorld } from './world.js';

/** The random bytes of generated MACs: crypto's, or a fixed source while a test exhausts the pool. */
let pick: ((n: number) => number) | undefined;
// CLUSTER_UUID's OUI is 3e:45:cd (first byte with a low hex digit of 2, 6, a or e), apart from the other MAC suites'.
const t = useWorld('ctl-vmmac-auto', {
  env: { CLUSTER_UUID: '3e45cd67-1a2b-4c3d-8e4f-5a6b7c8d9e0f', DEPENDENCY_RECHECK_INTERVAL: '500ms' },
  controller: { macRandom: (n) => pick?.(n) ?? randomInt(n) },
});

const UID_LABEL = 'virtualization.deckhouse.io/virtual-machine-uid';
const lan: VirtualMachine['spec']['networks'] = [{ type: 'Main' }, { type: 'Network', name: 'lan' }];
const cond = (type: string) => (v: VirtualMachine) => v.status?.conditions?.find((c) => c.type === type);
const macReady = cond('VirtualMachineMACAddressReady');
const leaseOf = (mac: string): string => `mac-${mac.replaceAll(':', '-')}`;

async function ownedBy(name: string): Promise<VirtualMachineMACAddress[]> {
  const vm = await t.c.vms.get({ namespace: t.w.ns, name });
  return (await macs().list({ namespace: t.w.ns, labelSelector: `${UID_LABEL}=${vm.metadata.uid ?? ''}` })).items;
}
const interfaceMacs = async (name: string): Promise<(string | undefined)[]> =>
  ((await t.c.kvvms.get({ namespace: t.w.ns, name })).spec.template.spec.domain.devices?.interfaces ?? []).map((i) => i.macAddress);
const vmmacsReconciled = async (): Promise<number> =>
  (await t.w.ctl.metrics.reconciles.get({ controller: 'vmmac', result: 'ok' })) +
  (await t.w.ctl.metrics.reconciles.get({ controller: 'vmmac', result: 'requeue' }));

describe('MAC addresses made for additional networks that name none', () => {
  it('makes one owned by the VM, leases it, puts it on the interface and shows it; NetworkReady says the SDN module is off', async () => {
    const created = await t.w.createVM('web', { runPolicy: 'AlwaysOn', networks: lan });
    const vm = await t.w.vmWhen('web', (v) => phaseIs('Running')(v) && macReady(v)?.status === 'True', 'Running with a made MAC address');
    const [made, ...more] = await ownedBy('web');
    expect(more).toEqual([]);
    expect(made?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'VirtualMachine', name: 'web', uid: created.metadata.uid, controller: true }),
    ]);
    expect(made?.metadata.labels?.[UID_LABEL]).toBe(created.metadata.uid);
    const address = made?.status?.address ?? '';
    expect(address).toMatch(/^3e:45:cd(:[0-9a-f]{2}){3}$/);
    expect(vm.status?.networks?.find((n) => n.type === 'Network')).toEqual({
      type: 'Network',
      name: 'lan',
      macAddress: address,
      virtualMachineMACAddressName: made?.metadata.name,
    });
    expect(await interfaceMacs('web')).toContain(address);
    await eventually(
      async () => (await macs().get({ namespace: t.w.ns, name: made?.metadata.name ?? '' })).status?.virtualMachineName === 'web',
      'attached to web',
    );
    expect(cond('NetworkReady')(vm)).toMatchObject({
      status: 'False',
      reason: 'SDNModuleDisabled',
      message: 'For additional network interfaces, please enable SDN module',
    });
  });

  it('keeps an address a user deletes while the VM’s interface carries it, and removes it with the VM', async () => {
    const [made] = await ownedBy('web');
    const name = made?.metadata.name ?? '';
    const address = made?.status?.address ?? '';
    const before = await vmmacsReconciled();
    await macs().delete({ namespace: t.w.ns, name });
    await eventually(async () => (await vmmacsReconciled()) > before, 'the deleted address looked at');
    const kept = await macs().get({ namespace: t.w.ns, name });
    expect(kept.metadata.deletionTimestamp).toBeDefined();
    expect(kept.metadata.finalizers).toContain('virtualization.deckhouse.io/vmmac-cleanup');
    expect(kept.status?.virtualMachineName).toBe('web');
    const vm = await t.c.vms.get({ namespace: t.w.ns, name: 'web' });
    expect(vm.status?.phase).toBe('Running');
    expect(await interfaceMacs('web')).toContain(address);

    await t.c.vms.delete({ namespace: t.w.ns, name: 'web' });
    await eventually(() => gone(() => macs().get({ namespace: t.w.ns, name })), 'the address gone with its VM');
    await eventually(() => gone(() => leases().get({ name: leaseOf(address) })), 'its lease freed');
  });

  it('deletes the address of a network removed from a stopped VM and frees its lease', async () => {
    await t.w.createVM('shrink', { runPolicy: 'AlwaysOff', networks: [...(lan ?? []), { type: 'ClusterNetwork', name: 'wan' }] });
    await t.w.vmWhen('shrink', (v) => phaseIs('Stopped')(v) && macReady(v)?.status === 'True', 'Stopped with two made MAC addresses');
    const both = await ownedBy('shrink');
    expect(both).toHaveLength(2);
    const wanName = (await t.c.vms.get({ namespace: t.w.ns, name: 'shrink' })).status?.networks?.find((n) => n.name === 'wan')?.virtualMachineMACAddressName;
    const wan = both.find((m) => m.metadata.name === wanName);
    const wanAddress = wan?.status?.address ?? '';
    expect(await interfaceMacs('shrink')).toContain(wanAddress);

    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'shrink' }, { spec: { networks: lan } });
    await eventually(() => gone(() => macs().get({ namespace: t.w.ns, name: wanName ?? '' })), 'the wan address deleted');
    await eventually(() => gone(() => leases().get({ name: leaseOf(wanAddress) })), 'its lease freed');
    const left = await ownedBy('shrink');
    expect(left.map((m) => m.metadata.name)).toEqual(both.filter((m) => m !== wan).map((m) => m.metadata.name));
    expect(await interfaceMacs('shrink')).not.toContain(wanAddress);
  });

  it('a VM whose address cannot be leased (pool exhausted) waits saying so; other VMs run; it starts once an address is free', async () => {
    pick = () => 0; // every generated MAC is 3e:45:cd:00:00:00: one address takes the whole pool
    try {
      await t.w.createVM('first', { runPolicy: 'AlwaysOn', networks: lan });
      await t.w.vmWhen('first', phaseIs('Running'), 'Running with the only address');
      const [held] = await ownedBy('first');
      expect(held?.status?.address).toBe('3e:45:cd:00:00:00');

      await t.w.createVM('second', { runPolicy: 'AlwaysOn', networks: lan });
      const waiting = await t.w.vmWhen('second', (v) => /no free MAC address/.test(macReady(v)?.message ?? ''), 'waiting for a free MAC address');
      const [pending] = await ownedBy('second');
      expect(macReady(waiting)).toMatchObject({
        status: 'False',
        reason: 'VirtualMachineMACAddressNotReady',
        message: `VirtualMachineMACAddress ${pending?.metadata.name ?? ''}: waiting for MAC address binding (no free MAC address found in OUI 3e:45:cd after 32 attempts)`,
      });
      expect(pending?.status?.phase).toBe('Pending');
      await expect(t.c.kvvms.get({ namespace: t.w.ns, name: 'second' })).rejects.toThrow();

      // A VM naming an address that asks its own MAC is not held up by the exhausted pool.
      await macs().create({
        apiVersion: API_VERSION,
        kind: 'VirtualMachineMACAddress',
        metadata: { name: 'own', namespace: t.w.ns },
        spec: { address: '02:45:cd:00:00:03' },
      });
      await t.w.createVM('third', {
        runPolicy: 'AlwaysOn',
        networks: [{ type: 'Main' }, { type: 'Network', name: 'lan', virtualMachineMACAddressName: 'own' }],
      });
      await t.w.vmWhen('third', phaseIs('Running'), 'Running beside the exhausted pool');
      expect((await t.c.vms.get({ namespace: t.w.ns, name: 'first' })).status?.phase).toBe('Running');

      await t.c.vms.delete({ namespace: t.w.ns, name: 'first' });
      const started = await t.w.vmWhen('second', (v) => phaseIs('Running')(v) && macReady(v)?.status === 'True', 'Running once the address is free');
      expect(started.status?.networks?.find((n) => n.type === 'Network')?.macAddress).toBe('3e:45:cd:00:00:00');
    } finally {
      pick = undefined;
    }
  });
});
