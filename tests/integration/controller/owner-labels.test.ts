/**
 * Objects the controller makes carry owner labels that tie them to their owner, and it puts them back
 * when a user removes them, as the original does: a lease's address uid label, the VM uid label of
 * the address it made for a VM. Labels of objects the user made stay the user's.
 */
import { describe, expect, it } from '@jest/globals';
import { API_VERSION } from '../../../shared/api/resources/common.js';
import { VMIP_UID_LABEL } from '../../../daemons/controller/reconcilers/ipam/allocate.js';
import { VM_UID_LABEL } from '../../../daemons/controller/reconcilers/vm/handlers/ipam.js';
import { eventually } from './fixtures.js';
import { useWorld } from './world.js';

const t = useWorld('ctl-owner-labels', { env: { VIRTUAL_MACHINE_CIDRS: '10.217.0.0/24' }, kubevirt: false });

const removeLabel = (key: string) => [{ op: 'remove' as const, path: `/metadata/labels/${key.replace(/~/g, '~0').replace(/\//g, '~1')}` }];

describe('owner labels', () => {
  it("restores the address uid label of a lease and the VM uid label of the VM's address after a user removes them", async () => {
    const vm = await t.w.createVM('labelled');
    const vmipName = (await t.w.vmWhen('labelled', (v) => (v.status?.virtualMachineIPAddressName ?? '') !== '', 'address named')).status
      ?.virtualMachineIPAddressName as string;
    const vmip = await eventually(async () => {
      const ip = await t.c.vmips.get({ namespace: t.w.ns, name: vmipName });
      return (ip.status?.phase === 'Bound' || ip.status?.phase === 'Attached') && ip;
    }, 'address Bound or Attached');
    const leaseName = `ip-${(vmip.status?.address ?? '').replace(/\./g, '-')}`;
    expect((await t.c.leases.get({ name: leaseName })).metadata.labels?.[VMIP_UID_LABEL]).toBe(vmip.metadata.uid);

    await t.c.leases.jsonPatch({ name: leaseName }, removeLabel(VMIP_UID_LABEL));
    await t.c.vmips.jsonPatch({ namespace: t.w.ns, name: vmipName }, removeLabel(VM_UID_LABEL));

    await eventually(async () => (await t.c.leases.get({ name: leaseName })).metadata.labels?.[VMIP_UID_LABEL] === vmip.metadata.uid, 'lease label back');
    await eventually(
      async () => (await t.c.vmips.get({ namespace: t.w.ns, name: vmipName })).metadata.labels?.[VM_UID_LABEL] === vm.metadata.uid,
      'address label back',
    );
    // The lease stayed bound to the same address throughout.
    const lease = await t.c.leases.get({ name: leaseName });
    expect(lease.spec.virtualMachineIPAddressRef).toEqual({ namespace: t.w.ns, name: vmipName });
    expect(lease.status?.phase).toBe('Bound');
  });

  it('gives no owner label to an address a user made without one', async () => {
    await t.c.vmips.create({ apiVersion: API_VERSION, kind: 'VirtualMachineIPAddress', metadata: { name: 'mine', namespace: t.w.ns }, spec: { type: 'Auto' } });
    const ip = await eventually(async () => {
      const got = await t.c.vmips.get({ namespace: t.w.ns, name: 'mine' });
      return got.status?.phase === 'Bound' && got;
    }, 'Bound');
    expect(ip.metadata.labels?.[VM_UID_LABEL]).toBeUndefined();
  });
});
