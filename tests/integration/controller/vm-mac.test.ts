/**
 * MAC addresses on a VM's additional network interfaces: a VirtualMachineMACAddress the VM names in
 * `spec.networks` is leased by the MAC reconcilers, written onto the internal VM's interface
 * (`macAddress`) and shown in `status.networks` as the original shows it; an address that is missing,
 * or attached to another VM, keeps the VM waiting with `VirtualMachineMACAddressReady=False` in the
 * original's words. KubeVirt is the simulator.
 */
import { describe, expect, it } from '@jest/globals';
import { API_VERSION } from '../../../shared/api/resources/common.js';
import { VirtualMachineMACAddressSchema, virtualMachineMACAddress, type VirtualMachineMACAddress } from '../../../shared/api/resources/addresses.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { descriptorOf } from '../../../shared/kube/index.js';
import { interfaceNameOf } from '../../../daemons/controller/reconcilers/vm/kvvm/devices.js';
import { eventually, mainKube, TEST_FIELD_MANAGER } from './fixtures.js';
import { phaseIs, useWorld } from './world.js';

const t = useWorld('ctl-vmmac', { env: { CLUSTER_UUID: '0f12ab34-5c6d-4e7f-8a9b-0c1d2e3f4a5b' } });
const macs = () => mainKube().resource(descriptorOf(virtualMachineMACAddress), VirtualMachineMACAddressSchema, TEST_FIELD_MANAGER);

const vmmac = (name: string, address?: string): VirtualMachineMACAddress => ({
  apiVersion: API_VERSION,
  kind: 'VirtualMachineMACAddress',
  metadata: { name, namespace: t.w.ns },
  spec: address === undefined ? {} : { address },
});
const networks = (mac: string): VirtualMachine['spec']['networks'] => [{ type: 'Main' }, { type: 'Network', name: 'lan', virtualMachineMACAddressName: mac }];
const macCond = (v: VirtualMachine) => v.status?.conditions?.find((c) => c.type === 'VirtualMachineMACAddressReady');
const interfaces = async (name: string) => (await t.c.kvvms.get({ namespace: t.w.ns, name })).spec.template.spec.domain.devices?.interfaces ?? [];

describe('MAC addresses on VM interfaces', () => {
  it('puts the asked address on the internal VM’s interface and shows it in status.networks', async () => {
    await macs().create(vmmac('nic-a', '02:AA:bb:00:11:22'));
    await t.w.createVM('web', { runPolicy: 'AlwaysOn', networks: networks('nic-a') });
    const vm = await t.w.vmWhen('web', (v) => phaseIs('Running')(v) && macCond(v)?.status === 'True', 'Running with its MAC address');
    expect(macCond(vm)?.reason).toBe('VirtualMachineMACAddressReady');
    expect(vm.status?.networks?.find((n) => n.type === 'Network')).toEqual({
      type: 'Network',
      name: 'lan',
      macAddress: '02:aa:bb:00:11:22',
      virtualMachineMACAddressName: 'nic-a',
    });
    const iface = (await interfaces('web')).find((i) => i.macAddress === '02:aa:bb:00:11:22');
    expect(iface?.name).toBe(interfaceNameOf('02:aa:bb:00:11:22', 'Network'));
    expect((await t.c.kvvms.get({ namespace: t.w.ns, name: 'web' })).spec.template.spec.networks).toContainEqual({
      name: iface?.name,
      multus: { networkName: 'lan' },
    });
    await eventually(async () => (await macs().get({ namespace: t.w.ns, name: 'nic-a' })).status?.virtualMachineName === 'web', 'the address attached to web');
  });

  it('gives a generated address of the cluster’s pool to the interface', async () => {
    await macs().create(vmmac('nic-gen'));
    await t.w.createVM('gen', { runPolicy: 'AlwaysOn', networks: networks('nic-gen') });
    const vm = await t.w.vmWhen('gen', phaseIs('Running'), 'Running');
    const bound = (await macs().get({ namespace: t.w.ns, name: 'nic-gen' })).status?.address ?? '';
    expect(bound).toMatch(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
    expect(vm.status?.networks?.find((n) => n.type === 'Network')?.macAddress).toBe(bound);
    expect((await interfaces('gen')).map((i) => i.macAddress)).toContain(bound);
  });

  it('waits for an address that does not exist yet, saying so, and starts once it is made', async () => {
    await t.w.createVM('late', { runPolicy: 'AlwaysOn', networks: networks('nic-late') });
    const waiting = await t.w.vmWhen('late', (v) => macCond(v)?.status === 'False', 'waiting for its MAC address');
    expect(macCond(waiting)).toMatchObject({
      reason: 'VirtualMachineMACAddressNotReady',
      message: 'The requested MAC address (nic-late) for the virtual machine not found: waiting for the MAC address',
    });
    await expect(t.c.kvvms.get({ namespace: t.w.ns, name: 'late' })).rejects.toThrow();
    await macs().create(vmmac('nic-late'));
    await t.w.vmWhen('late', (v) => phaseIs('Running')(v) && macCond(v)?.status === 'True', 'Running once the address is bound');
  });

  it('refuses an address attached to another VM: the second VM waits, naming the holder', async () => {
    await t.w.createVM('thief', { runPolicy: 'AlwaysOn', networks: networks('nic-a') });
    const waiting = await t.w.vmWhen('thief', (v) => macCond(v)?.status === 'False', 'waiting: the address is taken');
    expect(macCond(waiting)?.message).toBe("The requested MAC address (nic-a) attached to VirtualMachine 'web': waiting for the MAC address");
    await expect(t.c.kvvms.get({ namespace: t.w.ns, name: 'thief' })).rejects.toThrow();
    expect((await t.c.vms.get({ namespace: t.w.ns, name: 'web' })).status?.phase).toBe('Running');
  });

  it('refuses a malformed asked address and an empty address name at the apiserver', async () => {
    await expect(macs().create(vmmac('bad', '02:aa:bb:00:11'))).rejects.toThrow(/spec\.address/);
    await expect(t.w.createVM('noname', { networks: [{ type: 'Main' }, { type: 'Network', name: 'lan', virtualMachineMACAddressName: '' }] })).rejects.toThrow(
      /spec\.networks\[1\]\.virtualMachineMACAddressName/,
    );
  });
});
