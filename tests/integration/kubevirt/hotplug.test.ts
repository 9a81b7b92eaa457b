/**
 * Disk hot-plug through REAL KubeVirt (v1.6.0: virt-api and virt-controller behind our api-rewriter,
 * HotplugVolumes as the install configures it): an attachment's `addvolume` goes, in the subresource
 * API's translation, to virt-api's VM subresource, which writes the request into the internal VM's
 * status; virt-controller applies it to the VM's template and the instance and makes the hot-plug
 * attachment pod; the node agent plays virt-handler (mounted, attached on a SCSI target, Ready), and
 * the VirtualMachineBlockDeviceAttachment is Attached. Its deletion unplugs the disk the same way
 * back (unmounted, the attachment pod removed by virt-controller). Broken calls get virt-api's answer.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeStorageClients, type StorageClients } from '../../../daemons/controller/reconcilers/provisioning/kube.js';
import { StorageSimulator } from '../../../platform/simulators/storage-simulator/simulator.js';
import { API_VERSION } from '../../../shared/api/resources/common.js';
import type { InternalVirtualMachineInstance } from '../../../shared/api/internal/resources.js';
import { vm as vmOf } from '../controller/builders.js';
import { SCOPE_LABEL, TEST_FIELD_MANAGER } from '../controller/fixtures.js';
import { startRealSystem, type RealSystem } from './system-rig.js';
import { RealVirtApiHotplug, VirtApiRefusal } from './virt-api-hotplug.js';

let sys: RealSystem | undefined;
let hotplug: RealVirtApiHotplug | undefined;
let sc: StorageClients;
let storageClass = '';

beforeAll(async () => {
  sys = await startRealSystem('kv-hotplug', {
    nodes: 1,
    cidr: '10.66.2.0/24',
    // Pods get their token volume, as in a cluster: virt-controller counts an attachment pod's volumes with it.
    serviceAccountAdmission: true,
    controller: async (kv, seeded) => {
      const ns = seeded.scope.namespace;
      hotplug = new RealVirtApiHotplug(kv);
      sc = makeStorageClients(seeded.kube, TEST_FIELD_MANAGER);
      storageClass = `kv-hotplug-${seeded.scope.id}`;
      await sc.storageClasses.create({
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: storageClass, labels: { [SCOPE_LABEL]: seeded.scope.id } },
        provisioner: 'kubernetes.io/no-provisioner',
        volumeBindingMode: 'Immediate',
      });
      // The storage: claims of the class bound to directory volumes (no node needed).
      const storage = new StorageSimulator(seeded.kube, {
        volumesDir: mkdtempSync(join(tmpdir(), 'kv-hotplug-volumes-')),
        storageClasses: [storageClass],
        namespace: ns,
        requireNode: false,
      });
      await storage.start();
      return {
        env: { STORAGE_RECONCILERS: 'true', POD_NAMESPACE: ns, DEPENDENCY_RECHECK_INTERVAL: '1s' },
        options: { hotplug },
        stop: () => storage.stop(),
      };
    },
  });
}, 300_000);

afterAll(async () => {
  await sys?.stop();
});

const rig = (): RealSystem => {
  if (sys === undefined || hotplug === undefined) throw new Error('the real-KubeVirt system did not start');
  return sys;
};
const virtApi = (): RealVirtApiHotplug => {
  if (hotplug === undefined) throw new Error('the real-KubeVirt system did not start');
  return hotplug;
};

type VolumeStatus = { name?: string; phase?: string; reason?: string; message?: string; target?: string; hotplugVolume?: { attachPodName?: string } };
const volumeStatusOf = (vmi: InternalVirtualMachineInstance, name: string): VolumeStatus | undefined =>
  (vmi.status?.volumeStatus ?? []).find((v) => (v as VolumeStatus).name === name);
const instance = (name: string): Promise<InternalVirtualMachineInstance> => rig().c.kvvmis.get({ namespace: rig().scope.namespace, name });
const attachmentPods = async (): Promise<{ metadata: { name: string }; spec: { nodeName?: string } }[]> => {
  const out = await rig().kv.ok(['get', 'pods', '-n', rig().scope.namespace, '-o', 'json']);
  return (JSON.parse(out) as { items: { metadata: { name: string }; spec: { nodeName?: string } }[] }).items.filter((p) =>
    p.metadata.name.startsWith('hp-volume-'),
  );
};

describe('disk hot-plug through upstream virt-api and virt-controller v1.6.0, the simulator as virt-handler', () => {
  it('a VMBDA attaches a blank disk to a running VM (attachment pod, MountedToPod, Ready on a SCSI target), and its deletion detaches it', async () => {
    const { c, scope, className, imageName } = rig();
    const ns = scope.namespace;
    await c.vms.create(vmOf(scope, 'web', className, { blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: imageName }] }));
    await rig().vmWhen('web', 'Running', (v) => v.status?.phase === 'Running');
    await c.disks.create({
      apiVersion: API_VERSION,
      kind: 'VirtualDisk',
      metadata: { name: 'data', namespace: ns },
      spec: { persistentVolumeClaim: { size: '10Mi', storageClassName: storageClass } },
    });
    const disk = await rig().until('web', 'the blank disk Ready', async () => {
      const d = await c.disks.get({ namespace: ns, name: 'data' });
      return d.status?.phase === 'Ready' ? d : undefined;
    });
    const claim = disk.status?.target?.persistentVolumeClaimName ?? '';
    await sc.vmbdas.create({
      apiVersion: API_VERSION,
      kind: 'VirtualMachineBlockDeviceAttachment',
      metadata: { name: 'hot', namespace: ns },
      spec: { blockDeviceRef: { kind: 'VirtualDisk', name: 'data' }, virtualMachineName: 'web' },
    });
    await rig()
      .until('web', 'the VMBDA Attached', async () => (await sc.vmbdas.get({ namespace: ns, name: 'hot' })).status?.phase === 'Attached' || undefined)
      .catch(async (err: unknown) => {
        // What KubeVirt did with the volume: the attachment pods and virt-controller's words on it.
        const pods = (await rig().kv.kubectl(['get', 'pods', '-n', ns, '-o', 'yaml'])).stdout;
        const words = rig()
          .kv.controllerLog()
          .split('\n')
          .filter((l) => /hotplug|attachment|volume|vmi conditions/i.test(l))
          .slice(-40);
        throw new Error(`${String(err)}\n--- pods\n${pods}\n--- virt-controller\n${words.join('\n')}`, { cause: err });
      });

    expect(virtApi().calls).toEqual([expect.objectContaining({ op: 'add', vm: 'web', name: 'vd-data', volumeKind: 'VirtualDisk', pvcName: claim })]);
    // virt-controller applied virt-api's request to the instance and made the attachment pod on its node.
    const vmi = await instance('web');
    expect(vmi.spec.volumes?.find((v) => v.name === 'vd-data')).toMatchObject({ persistentVolumeClaim: { claimName: claim, hotpluggable: true } });
    expect(vmi.spec.domain.devices?.disks?.find((d) => d.name === 'vd-data')).toMatchObject({ disk: { bus: 'scsi' } });
    const status = volumeStatusOf(vmi, 'vd-data');
    expect(status).toMatchObject({ phase: 'Ready', reason: 'VolumeReady', target: expect.stringMatching(/^sd[a-z]$/) as unknown });
    const [pod] = await attachmentPods();
    expect(pod?.metadata.name).toBe(status?.hotplugVolume?.attachPodName);
    expect(pod?.spec.nodeName).toBe(vmi.status?.nodeName);
    // ... and to the internal VM's template, which our controller keeps: no restart awaited for it.
    const kvvm = await c.kvvms.get({ namespace: ns, name: 'web' });
    expect(kvvm.spec.template.spec.volumes?.some((v) => v.name === 'vd-data' && v.persistentVolumeClaim?.hotpluggable === true)).toBe(true);
    const vm = await c.vms.get({ namespace: ns, name: 'web' });
    expect(vm.status?.conditions?.find((x) => x.type === 'AwaitingRestartToApplyConfiguration')).toBeUndefined();

    await sc.vmbdas.delete({ namespace: ns, name: 'hot' });
    await rig().until('web', 'the VMBDA gone', async () => {
      const left = await sc.vmbdas.list({ namespace: ns });
      return !left.items.some((a) => a.metadata.name === 'hot') || undefined;
    });
    expect(virtApi().calls.filter((x) => x.op === 'remove')).toEqual([{ op: 'remove', namespace: ns, vm: 'web', name: 'vd-data' }]);
    const after = await instance('web');
    expect(after.spec.volumes?.some((v) => v.name === 'vd-data')).toBe(false);
    expect(volumeStatusOf(after, 'vd-data')).toBeUndefined();
    await rig().until('web', 'the attachment pod removed', async () => (await attachmentPods()).length === 0 || undefined);
    const template = (await c.kvvms.get({ namespace: ns, name: 'web' })).spec.template.spec;
    expect(template.volumes?.some((v) => v.name === 'vd-data')).toBe(false);
    expect((await c.vms.get({ namespace: ns, name: 'web' })).status?.phase).toBe('Running');
  }, 420_000);

  it("answers broken calls with virt-api's own errors, reports a missing claim on the instance, and keeps serving", async () => {
    const ns = rig().scope.namespace;
    const refusal = async (call: Promise<unknown>): Promise<VirtApiRefusal> => {
      const err = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      if (!(err instanceof VirtApiRefusal)) throw new Error(`expected virt-api to refuse, got ${String(err)}`);
      return err;
    };
    const path = `/apis/subresources.kubevirt.io/v1/namespaces/${ns}/virtualmachines/web/addvolume`;
    const noSource = await refusal(virtApi().send(path, Buffer.from(JSON.stringify({ name: 'x', disk: { disk: { bus: 'scsi' } } }))));
    expect(noSource).toMatchObject({ status: 400, message: expect.stringContaining('AddVolumeOptions requires VolumeSource to not be nil') as unknown });
    const never = await refusal(virtApi().put('removevolume', ns, 'web', { name: 'never-added' }));
    expect(never).toMatchObject({
      status: 409,
      message: expect.stringContaining('Unable to remove volume [never-added] because it does not exist') as unknown,
    });

    // A claim that does not exist: virt-api takes the request, virt-controller says what is missing on the instance.
    expect(await virtApi().put('addvolume', ns, 'web', { name: 'vd-ghost', volumeKind: 'VirtualDisk', pvcName: 'no-such-claim' })).toBe(202);
    const pending = await rig().until('web', 'the missing claim reported', async () => {
      const s = volumeStatusOf(await instance('web'), 'vd-ghost');
      return s?.phase === 'Pending' ? s : undefined;
    });
    expect(pending.message).toBe('PVC no-such-claim not found');
    expect(await attachmentPods()).toEqual([]);
    expect(await virtApi().put('removevolume', ns, 'web', { name: 'vd-ghost' })).toBe(202);
    await rig().until('web', 'the missing claim gone from the instance', async () => {
      const got = await instance('web');
      return (volumeStatusOf(got, 'vd-ghost') === undefined && !got.spec.volumes?.some((v) => v.name === 'vd-ghost')) || undefined;
    });
    expect((await rig().c.vms.get({ namespace: ns, name: 'web' })).status?.phase).toBe('Running');
  }, 300_000);
});
