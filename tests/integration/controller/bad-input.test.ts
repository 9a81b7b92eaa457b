import { describe, expect, it } from '@jest/globals';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { disk, image, makeDiskReady, makeImageReady, vm } from './builders.js';
import { eventually } from './fixtures.js';
import { phaseIs, useWorld } from './world.js';

const t = useWorld('ctl-bad', { env: { DEPENDENCY_RECHECK_INTERVAL: '500ms' } });

const condition = (v: VirtualMachine, type: string): { status: string; reason: string; message: string } | undefined =>
  v.status?.conditions?.find((x) => x.type === type);

async function noInternalVM(name: string): Promise<boolean> {
  return (await t.c.kvvms.list({ namespace: t.w.ns })).items.every((k) => k.metadata.name !== name);
}

describe('a VM with dependencies that are missing or not ready', () => {
  it('reports a missing class with a reason and message, waits, and converges once the class exists', async () => {
    const className = `late-${t.w.scope.id}`;
    await t.c.vms.create(vm(t.w.scope, 'no-class', className, { blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: t.w.imageName }] }));
    const waiting = await t.w.vmWhen('no-class', (v) => condition(v, 'VirtualMachineClassReady')?.status === 'False', 'class not ready');
    expect(condition(waiting, 'VirtualMachineClassReady')).toMatchObject({
      reason: 'VirtualMachineClassNotReady',
      message: `VirtualMachineClass ${className} not found`,
    });
    expect(waiting.status?.phase).toBe('Pending');
    expect(condition(waiting, 'Running')?.message).toContain('not found');
    expect(await noInternalVM('no-class')).toBe(true);

    const cls = await t.c.classes.get({ name: t.w.className });
    await t.c.classes.create({ ...cls, metadata: { name: className, labels: cls.metadata.labels }, status: undefined });
    await t.w.vmWhen('no-class', phaseIs('Running'), 'Running once the class exists');
    expect(condition(await t.c.vms.get({ namespace: t.w.ns, name: 'no-class' }), 'VirtualMachineClassReady')?.status).toBe('True');
  });

  it('reports a missing disk and image, and a disk that is not ready, then converges', async () => {
    await t.c.vms.create(
      vm(t.w.scope, 'no-disks', t.w.className, {
        blockDeviceRefs: [
          { kind: 'VirtualImage', name: 'boot' },
          { kind: 'VirtualDisk', name: 'data' },
        ],
      }),
    );
    const missing = await t.w.vmWhen('no-disks', (v) => condition(v, 'BlockDevicesReady')?.status === 'False', 'block devices not ready');
    expect(condition(missing, 'BlockDevicesReady')).toMatchObject({
      reason: 'BlockDevicesNotReady',
      message: 'VirtualImage boot not found; VirtualDisk data not found',
    });
    expect(missing.status?.blockDeviceRefs).toEqual([
      { kind: 'VirtualImage', name: 'boot', attached: false, bootOrder: 1 },
      { kind: 'VirtualDisk', name: 'data', attached: false, bootOrder: 2 },
    ]);
    await t.c.images.create(image(t.w.scope, 'boot'));
    await makeImageReady(t.c, t.w.scope, 'boot');
    await t.c.disks.create(disk(t.w.scope, 'data'));
    await t.c.disks.patchStatus({ namespace: t.w.ns, name: 'data' }, { phase: 'Provisioning', progress: '10%' });
    await t.w.vmWhen('no-disks', (v) => condition(v, 'BlockDevicesReady')?.message === 'VirtualDisk data is not ready (phase Provisioning)', 'disk not ready');
    expect(await noInternalVM('no-disks')).toBe(true);
    await makeDiskReady(t.c, t.w.scope, 'data');
    const running = await t.w.vmWhen('no-disks', phaseIs('Running'), 'Running');
    expect(running.status?.blockDeviceRefs?.map((r) => r.attached)).toEqual([true, true]);
    const vd = await t.c.disks.get({ namespace: t.w.ns, name: 'data' });
    expect(vd.metadata.finalizers).toContain('virtualization.deckhouse.io/vd-protection');
  });

  it('reports a missing provisioning Secret and converges when it appears', async () => {
    await t.w.createVM('no-secret', { provisioning: { type: 'UserDataRef', userDataRef: { kind: 'Secret', name: 'cloud-init' } } });
    const waiting = await t.w.vmWhen('no-secret', (v) => condition(v, 'ProvisioningReady')?.status === 'False', 'provisioning not ready');
    expect(condition(waiting, 'ProvisioningReady')).toMatchObject({ reason: 'ProvisioningNotReady', message: 'Secret cloud-init not found' });
    await t.c.secrets.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'cloud-init', namespace: t.w.ns },
      type: 'provisioning.virtualization.deckhouse.io/cloud-init',
      data: { userData: Buffer.from('#cloud-config\n').toString('base64') },
    });
    // No watch on Secrets: the waiting VM is looked at again by its requeue.
    await t.w.vmWhen('no-secret', phaseIs('Running'), 'Running');
  });

  it('lets VMs deleted right after creation go without failed reconciles', async () => {
    const names = Array.from({ length: 10 }, (_, i) => `flash-${i}`);
    await Promise.all(names.map((n) => t.w.createVM(n, { runPolicy: 'AlwaysOn' })));
    await Promise.all(names.map((n) => t.c.vms.delete({ namespace: t.w.ns, name: n })));
    await eventually(async () => (await t.c.vms.list({ namespace: t.w.ns })).items.every((v) => !names.includes(v.metadata.name ?? '')), 'all gone');
    // What they made goes with them; the reconciles that raced the deletes are behind us then.
    await eventually(
      async () => (await t.c.kvvms.list({ namespace: t.w.ns })).items.every((k) => !names.includes(k.metadata.name ?? '')),
      'their internal VMs gone',
    );
    expect(await t.w.ctl.metrics.reconciles.get({ controller: 'vm', result: 'error' })).toBe(0);
  });
});
