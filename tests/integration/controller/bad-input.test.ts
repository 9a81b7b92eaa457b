import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import type { KubeClient } from '../../../shared/kube/index.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { disk, image, makeDiskReady, makeImageReady, vm } from './builders.js';
import { eventually, mainKube, pause, testClients } from './fixtures.js';
import { phaseIs, startWorld, type World } from './world.js';

let kube: KubeClient;
let c: Clients;
let w: World;

beforeAll(async () => {
  kube = mainKube();
  c = testClients(kube);
  w = await startWorld(kube, c, 'ctl-bad', { env: { DEPENDENCY_RECHECK_INTERVAL: '500ms' } });
});
afterAll(async () => {
  await w.stop();
  kube.close();
});

const condition = (v: VirtualMachine, type: string): { status: string; reason: string; message: string } | undefined =>
  v.status?.conditions?.find((x) => x.type === type);

async function noInternalVM(name: string): Promise<boolean> {
  return (await c.kvvms.list({ namespace: w.ns })).items.every((k) => k.metadata.name !== name);
}

describe('a VM with dependencies that are missing or not ready', () => {
  it('reports a missing class with a reason and message, waits, and converges once the class exists', async () => {
    const className = `late-${w.scope.id}`;
    await c.vms.create(vm(w.scope, 'no-class', className, { blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: w.imageName }] }));
    const waiting = await w.vmWhen('no-class', (v) => condition(v, 'VirtualMachineClassReady')?.status === 'False', 'class not ready');
    expect(condition(waiting, 'VirtualMachineClassReady')).toMatchObject({ reason: 'VirtualMachineClassNotReady', message: `VirtualMachineClass ${className} not found` });
    expect(waiting.status?.phase).toBe('Pending');
    expect(condition(waiting, 'Running')?.message).toContain('not found');
    expect(await noInternalVM('no-class')).toBe(true);

    const cls = await c.classes.get({ name: w.className });
    await c.classes.create({ ...cls, metadata: { name: className, labels: cls.metadata.labels }, status: undefined });
    await w.vmWhen('no-class', phaseIs('Running'), 'Running once the class exists');
    expect(condition(await c.vms.get({ namespace: w.ns, name: 'no-class' }), 'VirtualMachineClassReady')?.status).toBe('True');
  });

  it('reports a missing disk and image, and a disk that is not ready, then converges', async () => {
    await c.vms.create(
      vm(w.scope, 'no-disks', w.className, {
        blockDeviceRefs: [
          { kind: 'VirtualImage', name: 'boot' },
          { kind: 'VirtualDisk', name: 'data' },
        ],
      }),
    );
    const missing = await w.vmWhen('no-disks', (v) => condition(v, 'BlockDevicesReady')?.status === 'False', 'block devices not ready');
    expect(condition(missing, 'BlockDevicesReady')).toMatchObject({
      reason: 'BlockDevicesNotReady',
      message: 'VirtualImage boot not found; VirtualDisk data not found',
    });
    expect(missing.status?.blockDeviceRefs).toEqual([
      { kind: 'VirtualImage', name: 'boot', attached: false, bootOrder: 1 },
      { kind: 'VirtualDisk', name: 'data', attached: false, bootOrder: 2 },
    ]);
    await c.images.create(image(w.scope, 'boot'));
    await makeImageReady(c, w.scope, 'boot');
    await c.disks.create(disk(w.scope, 'data'));
    await c.disks.patchStatus({ namespace: w.ns, name: 'data' }, { phase: 'Provisioning', progress: '10%' });
    await w.vmWhen('no-disks', (v) => condition(v, 'BlockDevicesReady')?.message === 'VirtualDisk data is not ready (phase Provisioning)', 'disk not ready');
    expect(await noInternalVM('no-disks')).toBe(true);
    await makeDiskReady(c, w.scope, 'data');
    const running = await w.vmWhen('no-disks', phaseIs('Running'), 'Running');
    expect(running.status?.blockDeviceRefs?.map((r) => r.attached)).toEqual([true, true]);
    const vd = await c.disks.get({ namespace: w.ns, name: 'data' });
    expect(vd.metadata.finalizers).toContain('virtualization.deckhouse.io/vd-protection');
  });

  it('reports a missing provisioning Secret and converges when it appears', async () => {
    await w.createVM('no-secret', { provisioning: { type: 'UserDataRef', userDataRef: { kind: 'Secret', name: 'cloud-init' } } });
    const waiting = await w.vmWhen('no-secret', (v) => condition(v, 'ProvisioningReady')?.status === 'False', 'provisioning not ready');
    expect(condition(waiting, 'ProvisioningReady')).toMatchObject({ reason: 'ProvisioningNotReady', message: 'Secret cloud-init not found' });
    await c.secrets.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'cloud-init', namespace: w.ns },
      type: 'provisioning.virtualization.deckhouse.io/cloud-init',
      data: { userData: Buffer.from('#cloud-config\n').toString('base64') },
    });
    // No watch on Secrets: the waiting VM is looked at again by its requeue.
    await w.vmWhen('no-secret', phaseIs('Running'), 'Running');
  });

  it('lets VMs deleted right after creation go without failed reconciles', async () => {
    const names = Array.from({ length: 10 }, (_, i) => `flash-${i}`);
    await Promise.all(names.map((n) => w.createVM(n, { runPolicy: 'AlwaysOn' })));
    await Promise.all(names.map((n) => c.vms.delete({ namespace: w.ns, name: n })));
    await eventually(async () => (await c.vms.list({ namespace: w.ns })).items.every((v) => !names.includes(v.metadata.name ?? '')), 'all gone');
    await pause(500);
    expect(w.ctl.metrics.reconciles.get({ controller: 'vm', result: 'error' })).toBe(0);
    expect((await c.kvvms.list({ namespace: w.ns })).items.filter((k) => names.includes(k.metadata.name ?? ''))).toEqual([]);
  });
});
