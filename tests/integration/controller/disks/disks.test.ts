/**
 * The storage reconcilers against the real apiserver: images imported over HTTP into a real registry
 * (DVCR) by the real importer program (run by the storage simulator as the kubelet would run its Pod), a disk
 * filled from an image on a PVC bound by kube-controller-manager, grow-only resize, and a hot-plug into
 * a running VM (KubeVirt played by the simulator and KubeVirtHotplugFake).
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../../shared/api/k8s/core.js';
import { API_VERSION } from '../../../../shared/api/resources/common.js';
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import type { ClusterVirtualImage, VirtualImage } from '../../../../shared/api/resources/virtualimage.js';
import type { VirtualMachineBlockDeviceAttachment } from '../../../../shared/api/resources/vmbda.js';
import type { KubeClient } from '../../../../shared/kube/index.js';
import type { LocalRegistry } from '../../../env/local-registry.js';
import { makeImage, serveDir, type FileServer } from '../../../../shared/testing/disk-images.js';
import type { Clients } from '../../../../daemons/controller/kube/resources.js';
import { makeStorageClients, type StorageClients } from '../../../../daemons/controller/reconcilers/provisioning/kube.js';
import { KubeVirtSimulator } from '../../../../platform/simulators/kubevirt-simulator/simulator.js';
import { freshNamespace } from '../../../env/index.js';
import { node, vm, vmClass } from '../builders.js';
import { waitFor } from '../../../../shared/testing/wait.js';
import { SCOPE_LABEL, TEST_FIELD_MANAGER, eventually, gone, mainKube, newScope, phaseIs, readWhen, testClients, type Scope } from '../fixtures.js';
import { KubeVirtHotplug } from './kubevirt-hotplug.js';
import type { StorageSimulator } from '../../../../platform/simulators/storage-simulator/simulator.js';
import { startImportRig, type ImportRig } from './import-rig.js';

const MiB = 1024 * 1024;
/** Waits that include importer runs (a Node process each): generous for a busy 2-core machine. */
const IMPORT = 120_000;
jest.setTimeout(4 * IMPORT);

let kube: KubeClient;
let c: Clients;
let sc: StorageClients;
let scope: Scope;
let ns: string;
let registry: LocalRegistry;
let files: FileServer;
let filesDir: string;
let storage: StorageSimulator;
let hotplug: KubeVirtHotplug;
let rig: ImportRig;
let kubevirt: KubeVirtSimulator;
let storageClass: string;
let qcow2Sha256: string;
let cviName: string;

beforeAll(async () => {
  kube = mainKube();
  c = testClients(kube);
  sc = makeStorageClients(kube, TEST_FIELD_MANAGER);
  scope = newScope(await freshNamespace('disks'));
  ns = scope.namespace;
  hotplug = new KubeVirtHotplug(c.kvvmis);
  await hotplug.start();
  // DVCR, the files, the class, the nodes and storage backend (SIMULATED: importer Pods run as the importer program, claims get directory volumes), the controller.
  rig = await startImportRig({
    kube,
    sc,
    scope,
    classPrefix: 'disks',
    classSpec: { allowVolumeExpansion: true },
    makeFiles(dir) {
      makeImage(dir, 'disk.qcow2', 'qcow2', 64);
      makeImage(dir, 'disk.raw', 'raw', 16);
      writeFileSync(join(dir, 'notes.txt'), '<html>this is a web page, not a disk</html>\n'.repeat(100));
    },
    // Short, so an upload that never starts fails within the test.
    env: { UPLOAD_WAIT_TIMEOUT: '8s' },
    start: { hotplug },
  });
  ({ registry, files, filesDir, storage, storageClass } = rig);
  qcow2Sha256 = createHash('sha256')
    .update(readFileSync(join(filesDir, 'disk.qcow2')))
    .digest('hex');
  kubevirt = new KubeVirtSimulator(kube, { namespace: ns, autoRunOn: `node-1-${scope.id}` });
  await kubevirt.start();
});

afterAll(async () => {
  await kubevirt.stop();
  await rig.stop();
  await hotplug.stop();
  kube.close();
});

function cvi(name: string, url: string, sha256?: string): ClusterVirtualImage {
  return {
    apiVersion: API_VERSION,
    kind: 'ClusterVirtualImage',
    metadata: { name: `${name}-${scope.id}`, labels: { [SCOPE_LABEL]: scope.id } },
    spec: { dataSource: { type: 'HTTP', http: { url, ...(sha256 !== undefined ? { checksum: { sha256 } } : {}) } } },
  };
}

function vi(name: string, url: string, sha256?: string): VirtualImage {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualImage',
    metadata: { name, namespace: ns },
    spec: { storage: 'ContainerRegistry', dataSource: { type: 'HTTP', http: { url, ...(sha256 !== undefined ? { checksum: { sha256 } } : {}) } } },
  };
}

/** A VirtualImage stored on a PVC of `storageClassName`, from HTTP. */
function viOnPVC(name: string, url: string, storageClassName: string): VirtualImage {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualImage',
    metadata: { name, namespace: ns },
    spec: { storage: 'PersistentVolumeClaim', persistentVolumeClaim: { storageClassName }, dataSource: { type: 'HTTP', http: { url } } },
  };
}

function disk(name: string, spec: VirtualDisk['spec']): VirtualDisk {
  return { apiVersion: API_VERSION, kind: 'VirtualDisk', metadata: { name, namespace: ns }, spec };
}

const ready = phaseIs('Ready');

describe('images', () => {
  it('a ClusterVirtualImage from HTTP (with its checksum) reaches Ready with format, size and its DVCR location', async () => {
    const created = await c.clusterImages.create(cvi('qcow2', `${files.url}/disk.qcow2`, qcow2Sha256));
    cviName = created.metadata.name ?? '';
    const img = await readWhen(() => c.clusterImages.get({ name: cviName }), ready, 'cluster image Ready', IMPORT);
    expect(img.status).toMatchObject({ format: 'qcow2', cdrom: false, progress: '100%', size: { unpackedBytes: String(64 * MiB), unpacked: '64Mi' } });
    expect(img.status?.target?.registryURL).toBe(`${registry.host}/cvi/${cviName}:${created.metadata.uid ?? ''}`);
    expect(img.status?.conditions?.find((x) => x.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(img.metadata.finalizers).toContain('virtualization.deckhouse.io/cvi-cleanup');
    // The image is really in the registry, and the importer Pod is cleaned up once Ready is stored.
    const manifest = await fetch(`${registry.url}/v2/cvi/${cviName}/manifests/${created.metadata.uid ?? ''}`, {
      headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
    });
    expect(manifest.status).toBe(200);
    await eventually(
      async () =>
        (await sc.helperPods.list({ namespace: ns, labelSelector: 'virtualization.deckhouse.io/helper' })).items.every(
          (p) => !p.metadata.annotations?.['virtualization.deckhouse.io/owner']?.includes(cviName),
        ),
      'importer Pod removed',
      IMPORT,
    );
  });

  it('a checksum mismatch fails with a reason a person understands, and nothing is pushed', async () => {
    await c.images.create(vi('bad-sum', `${files.url}/disk.raw`, '0'.repeat(64)));
    const img = await readWhen(() => c.images.get({ namespace: ns, name: 'bad-sum' }), phaseIs('Failed'), 'image Failed', IMPORT);
    const cond = img.status?.conditions?.find((x) => x.type === 'Ready');
    expect(cond).toMatchObject({ status: 'False', reason: 'ProvisioningFailed' });
    expect(cond?.message).toMatch(/^ChecksumMismatch: .*sha256/i);
    expect(img.status?.target?.registryURL).toBeUndefined();
    const tags = await fetch(`${registry.url}/v2/vi/${ns}/bad-sum/tags/list`);
    expect(tags.status).toBe(404);
  });

  it('a 404, a text file and a truncated qcow2 fail, each with its reason, and nothing is pushed', async () => {
    const cases = [
      ['missing', `${files.url}/status/404`, /^SourceNotFound: /],
      ['not-an-image', `${files.url}/notes.txt`, /^NotADiskImage: .*text/],
      ['truncated', `${files.url}/broken/disk.qcow2`, /^(CorruptImage|SourceUnreachable): /],
    ] as const;
    for (const [name, url] of cases) await c.images.create(vi(name, url));
    for (const [name, , reason] of cases) {
      const img = await readWhen(() => c.images.get({ namespace: ns, name }), phaseIs('Failed'), `${name} Failed`, IMPORT);
      expect(img.status?.conditions?.find((x) => x.type === 'Ready')?.message).toMatch(reason);
      expect(img.status?.target?.registryURL).toBeUndefined();
      expect((await fetch(`${registry.url}/v2/vi/${ns}/${name}/tags/list`)).status).toBe(404);
    }
  });

  it('an upload: WaitForUserUpload with the in-cluster URL, the bytes PUT to the uploader, then Ready', async () => {
    const upload = (name: string): VirtualImage => ({
      apiVersion: API_VERSION,
      kind: 'VirtualImage',
      metadata: { name, namespace: ns },
      spec: { storage: 'ContainerRegistry', dataSource: { type: 'Upload', upload: { checksum: { sha256: qcow2Sha256 } } } },
    });
    await c.images.create(upload('uploaded'));
    const waiting = await readWhen(() => c.images.get({ namespace: ns, name: 'uploaded' }), phaseIs('WaitForUserUpload'), 'image WaitForUserUpload', IMPORT);
    expect(waiting.status?.imageUploadURLs?.inCluster).toBe(`http://d8v-upload-vi-uploaded.${ns}.svc/upload`);
    await sc.services.get({ namespace: ns, name: 'd8v-upload-vi-uploaded' });
    // The Service would route to the Pod; here its program listens on the simulated pod IP.
    const address = await eventually(() => storage.uploadAddress('d8v-upload-vi-uploaded'), 'uploader listening', IMPORT);
    const res = await fetch(`http://${address}/upload`, { method: 'PUT', body: readFileSync(join(filesDir, 'disk.qcow2')) });
    expect(res.status).toBe(200);
    const img = await readWhen(() => c.images.get({ namespace: ns, name: 'uploaded' }), ready, 'uploaded image Ready', IMPORT);
    expect(img.status).toMatchObject({ format: 'qcow2', size: { unpackedBytes: String(64 * MiB) } });
    expect(img.status?.imageUploadURLs).toBeUndefined();
    await eventually(() => gone(() => sc.services.get({ namespace: ns, name: 'd8v-upload-vi-uploaded' })), 'uploader Service removed', IMPORT);

    // An upload that never starts fails after UPLOAD_WAIT_TIMEOUT.
    await c.images.create(upload('never'));
    const failed = await readWhen(() => c.images.get({ namespace: ns, name: 'never' }), phaseIs('Failed'), 'unstarted upload Failed', IMPORT);
    expect(failed.status?.conditions?.find((x) => x.type === 'Ready')).toMatchObject({
      reason: 'WaitForUserUploadTimeout',
      message: expect.stringMatching(/^UploadTimeout: /) as unknown,
    });
  });

  it('a VirtualImage from another image waits for it (DatasourceReady=False) and names it', async () => {
    await c.images.create({
      apiVersion: API_VERSION,
      kind: 'VirtualImage',
      metadata: { name: 'from-nothing', namespace: ns },
      spec: { storage: 'ContainerRegistry', dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: 'not-there' } } },
    });
    const img = await readWhen(() => c.images.get({ namespace: ns, name: 'from-nothing' }), phaseIs('Pending'), 'image Pending');
    expect(img.status?.conditions?.find((x) => x.type === 'DatasourceReady')).toMatchObject({
      status: 'False',
      reason: 'ImageNotReady',
      message: `VirtualImage ${ns}/not-there does not exist`,
    });
  });
});

describe('disks', () => {
  it('a disk from the image gets its PVC on the class, filled with the image as raw, and is Ready', async () => {
    await c.disks.create(
      disk('root', {
        dataSource: { type: 'ObjectRef', objectRef: { kind: 'ClusterVirtualImage', name: cviName } },
        persistentVolumeClaim: { storageClassName: storageClass },
      }),
    );
    const vd = await readWhen(() => c.disks.get({ namespace: ns, name: 'root' }), ready, 'disk Ready', IMPORT);
    const pvcName = vd.status?.target?.persistentVolumeClaimName ?? '';
    const pvc = await sc.pvcs.get({ namespace: ns, name: pvcName });
    expect(pvc.spec).toMatchObject({ storageClassName: storageClass, resources: { requests: { storage: String(64 * MiB) } } });
    expect(pvc.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'VirtualDisk', name: 'root', controller: true });
    expect(vd.status).toMatchObject({ storageClassName: storageClass, capacity: String(64 * MiB), sourceUID: expect.any(String) as unknown });
    // The volume holds the image converted to raw, of the image's virtual size.
    const file = join(storage.dirOf(ns, pvcName), 'disk.img');
    expect(statSync(file).size).toBe(64 * MiB);
    const info = JSON.parse(execFileSync('qemu-img', ['info', '--output=json', file]).toString()) as { format: string };
    expect(info.format).toBe('raw');
  });

  it('a resize down is refused and leaves the PVC alone; a resize up patches the PVC and follows it to the new capacity', async () => {
    const ref = { namespace: ns, name: 'root' };
    const pvcName = (await c.disks.get(ref)).status?.target?.persistentVolumeClaimName ?? '';
    await c.disks.mergePatch(ref, { spec: { persistentVolumeClaim: { size: '32Mi' } } });
    const refused = await readWhen(
      () => c.disks.get(ref),
      (got) => got.status?.conditions?.some((x) => x.type === 'Resizing' && x.reason === 'NotAvailable') === true,
      'shrink refused',
    );
    expect(refused.status?.phase).toBe('Ready');
    expect(refused.status?.conditions?.find((x) => x.type === 'Resizing')?.message).toMatch(/cannot shrink/);
    expect((await sc.pvcs.get({ namespace: ns, name: pvcName })).spec.resources?.requests?.['storage']).toBe(String(64 * MiB));

    await c.disks.mergePatch(ref, { spec: { persistentVolumeClaim: { size: '128Mi' } } });
    await eventually(async () => (await sc.pvcs.get({ namespace: ns, name: pvcName })).spec.resources?.requests?.['storage'] === '128Mi', 'PVC request grown');
    const resizing = await readWhen(() => c.disks.get(ref), phaseIs('Resizing'), 'disk Resizing');
    expect(resizing.status?.conditions?.find((x) => x.type === 'Resizing')).toMatchObject({ status: 'True', reason: 'InProgress' });
    // Play the volume's resizer: the PVC reports the new capacity.
    await sc.pvcs.patchStatus({ namespace: ns, name: pvcName }, { capacity: { storage: '128Mi' } });
    const grown = await readWhen(
      () => c.disks.get(ref),
      (got) => got.status?.phase === 'Ready' && got.status.capacity === '128Mi',
      'disk grown',
    );
    expect(grown.status?.conditions?.find((x) => x.type === 'Resizing')).toBeUndefined();
  });

  it('a blank disk gets a PVC of its size; one without a size waits and says why', async () => {
    await c.disks.create(disk('blank', { persistentVolumeClaim: { size: '10Mi', storageClassName: storageClass } }));
    const vd = await readWhen(() => c.disks.get({ namespace: ns, name: 'blank' }), ready, 'blank disk Ready');
    expect(vd.status?.capacity).toBe('10Mi');
    await c.disks.create(disk('no-size', { persistentVolumeClaim: { storageClassName: storageClass } }));
    const waiting = await readWhen(() => c.disks.get({ namespace: ns, name: 'no-size' }), phaseIs('Pending'), 'sizeless disk Pending');
    expect(waiting.status?.conditions?.find((x) => x.type === 'Ready')?.message).toMatch(/needs spec.persistentVolumeClaim.size/);
  });

  it('an image stored on a PVC goes through DVCR into its claim, and a disk copies that claim', async () => {
    await c.images.create(viOnPVC('on-pvc', `${files.url}/disk.raw`, storageClass));
    const img = await readWhen(() => c.images.get({ namespace: ns, name: 'on-pvc' }), ready, 'PVC image Ready', IMPORT);
    const imgPVC = img.status?.target?.persistentVolumeClaimName ?? '';
    expect(img.status).toMatchObject({
      storageClassName: storageClass,
      format: 'raw',
      target: { registryURL: expect.stringContaining(`/vi/${ns}/on-pvc:`) as unknown },
    });
    expect(statSync(join(storage.dirOf(ns, imgPVC), 'disk.img')).size).toBe(16 * MiB);
    await c.disks.create(
      disk('from-pvc-image', {
        dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: 'on-pvc' } },
        persistentVolumeClaim: { storageClassName: storageClass },
      }),
    );
    const vd = await readWhen(() => c.disks.get({ namespace: ns, name: 'from-pvc-image' }), ready, 'disk from PVC image Ready', IMPORT);
    const file = join(storage.dirOf(ns, vd.status?.target?.persistentVolumeClaimName ?? ''), 'disk.img');
    expect(readFileSync(file).equals(readFileSync(join(filesDir, 'disk.raw')))).toBe(true);
  });

  it('a disk smaller than its image fails with the size named', async () => {
    await c.disks.create(
      disk('too-small', {
        dataSource: { type: 'ObjectRef', objectRef: { kind: 'ClusterVirtualImage', name: cviName } },
        persistentVolumeClaim: { size: '1Mi', storageClassName: storageClass },
      }),
    );
    const vd = await readWhen(() => c.disks.get({ namespace: ns, name: 'too-small' }), phaseIs('Failed'), 'too small disk Failed');
    expect(vd.status?.conditions?.find((x) => x.type === 'Ready')?.message).toMatch(/insufficient: 1Mi is less than the image's 64Mi/);
  });
});

describe('attachments', () => {
  it('a VMBDA hot-plugs a disk into a running VM, and its deletion unplugs it', async () => {
    await c.nodes.create(node(scope, 'node-1'));
    const cls = await c.classes.create(vmClass(scope, 'generic'));
    await c.vms.create(vm(scope, 'guest', cls.metadata.name ?? '', { blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: cviName }] }));
    await eventually(async () => (await c.vms.get({ namespace: ns, name: 'guest' })).status?.phase === 'Running', 'VM Running');
    const attachment: VirtualMachineBlockDeviceAttachment = {
      apiVersion: API_VERSION,
      kind: 'VirtualMachineBlockDeviceAttachment',
      metadata: { name: 'hot', namespace: ns },
      spec: { blockDeviceRef: { kind: 'VirtualDisk', name: 'blank' }, virtualMachineName: 'guest' },
    };
    await sc.vmbdas.create(attachment);
    const attached = await readWhen(() => sc.vmbdas.get({ namespace: ns, name: 'hot' }), phaseIs('Attached'), 'VMBDA Attached').catch(async (err: unknown) => {
      const a = await sc.vmbdas.get({ namespace: ns, name: 'hot' });
      const vmi = await c.kvvmis.get({ namespace: ns, name: 'guest' });
      throw new Error(
        `${String(err)}: ${JSON.stringify(a.status)} calls ${JSON.stringify(hotplug.calls)} vmi ${JSON.stringify(vmi.spec.volumes)} ${JSON.stringify(vmi.status?.volumeStatus)}`,
      );
    });
    expect(attached.status?.virtualMachineName).toBe('guest');
    const blank = await c.disks.get({ namespace: ns, name: 'blank' });
    const adds = hotplug.calls.filter((x) => x.op === 'add');
    expect(adds).toEqual([
      expect.objectContaining({
        namespace: ns,
        vm: 'guest',
        name: 'vd-blank',
        volumeKind: 'VirtualDisk',
        pvcName: blank.status?.target?.persistentVolumeClaimName,
        isCdrom: false,
        serial: createHash('md5')
          .update(blank.metadata.uid ?? '')
          .digest('hex'),
      }),
    ]);
    // KubeVirt's part (the simulator's virt-api): the volume and its SCSI disk in the instance, reported Ready on a target.
    const vmi = await c.kvvmis.get({ namespace: ns, name: 'guest' });
    expect(vmi.spec.volumes?.find((v) => v.name === 'vd-blank')).toMatchObject({
      persistentVolumeClaim: { claimName: blank.status?.target?.persistentVolumeClaimName, hotpluggable: true },
    });
    expect(vmi.spec.domain?.devices?.disks?.find((x) => x.name === 'vd-blank')).toMatchObject({ disk: { bus: 'scsi' }, errorPolicy: 'report' });
    expect(vmi.status?.volumeStatus?.find((v) => (v as { name?: string }).name === 'vd-blank')).toMatchObject({
      phase: 'Ready',
      reason: 'VolumeReady',
      target: expect.stringMatching(/^sd[a-z]$/) as unknown,
    });
    await eventually(async () => {
      const got = await c.disks.get({ namespace: ns, name: 'blank' });
      return got.status?.attachedToVirtualMachines?.some((a) => a.name === 'guest' && a.mounted === true);
    }, 'disk shows the VM');

    // A second attachment of the same disk conflicts.
    await sc.vmbdas.create({ ...attachment, metadata: { name: 'hot-again', namespace: ns } });
    const second = await readWhen(() => sc.vmbdas.get({ namespace: ns, name: 'hot-again' }), phaseIs('Failed'), 'second VMBDA Failed');
    expect(second.status?.conditions?.find((x) => x.type === 'Attached')).toMatchObject({ reason: 'Conflict' });
    await sc.vmbdas.delete({ namespace: ns, name: 'hot-again' });
    await eventually(() => gone(() => sc.vmbdas.get({ namespace: ns, name: 'hot-again' })), 'conflicting VMBDA gone');
    expect(hotplug.calls.filter((x) => x.op === 'remove')).toEqual([]);

    await sc.vmbdas.delete({ namespace: ns, name: 'hot' });
    await eventually(() => gone(() => sc.vmbdas.get({ namespace: ns, name: 'hot' })), 'VMBDA gone');
    expect(hotplug.calls.filter((x) => x.op === 'remove')).toEqual([{ op: 'remove', namespace: ns, vm: 'guest', name: 'vd-blank' }]);
    const after = await c.kvvmis.get({ namespace: ns, name: 'guest' });
    expect(after.spec.volumes?.some((v) => v.name === 'vd-blank')).toBe(false);
    expect(after.spec.domain?.devices?.disks?.some((x) => x.name === 'vd-blank')).toBe(false);
    expect(after.status?.volumeStatus?.some((v) => (v as { name?: string }).name === 'vd-blank')).toBe(false);
  });

  it("KubeVirt's virt-api (simulated) refuses a broken addvolume or the removal of a volume the instance lacks, naming the problem, and changes nothing", async () => {
    const before = await c.kvvmis.get({ namespace: ns, name: 'guest' });
    const put = async (sub: string, body: string): Promise<{ status: number; message: string }> => {
      const res = await fetch(`${hotplug.virtApi.url}/apis/subresources.kubevirt.io/v1/namespaces/${ns}/virtualmachines/guest/${sub}`, { method: 'PUT', body });
      return { status: res.status, message: ((await res.json()) as { message: string }).message };
    };
    expect(await put('addvolume', JSON.stringify({ name: 'x', disk: { name: 'x' } }))).toEqual({
      status: 400,
      message: expect.stringMatching(/^AddVolumeOptions: volumeSource: /) as unknown,
    });
    expect(await put('addvolume', JSON.stringify({ disk: {}, volumeSource: { persistentVolumeClaim: { claimName: 'p' } } }))).toEqual({
      status: 400,
      message: expect.stringMatching(/^AddVolumeOptions: name: /) as unknown,
    });
    expect(await put('removevolume', JSON.stringify({ name: 'never-added' }))).toEqual({
      status: 400,
      message: expect.stringMatching(/never-added: it does not exist/) as unknown,
    });
    const after = await c.kvvmis.get({ namespace: ns, name: 'guest' });
    expect([after.spec.volumes, after.status?.volumeStatus]).toEqual([before.spec.volumes, before.status?.volumeStatus]);
  });

  it('a VMBDA for a disk that does not exist waits Pending and says so', async () => {
    await sc.vmbdas.create({
      apiVersion: API_VERSION,
      kind: 'VirtualMachineBlockDeviceAttachment',
      metadata: { name: 'ghost', namespace: ns },
      spec: { blockDeviceRef: { kind: 'VirtualDisk', name: 'ghost' }, virtualMachineName: 'guest' },
    });
    const got = await readWhen(() => sc.vmbdas.get({ namespace: ns, name: 'ghost' }), phaseIs('Pending'), 'VMBDA Pending');
    expect(got.status?.conditions?.find((x) => x.type === 'BlockDeviceReady')).toMatchObject({ status: 'False', message: 'VirtualDisk ghost not found' });
  });
});

type Progressing = { status?: { phase?: string; progress?: string; conditions?: { type: string; reason?: string; message?: string }[] } | undefined };

/** Every (phase, progress) an object shows, read every 100 ms until it is Ready; Failed throws with its Ready condition. */
async function phasesUntilDone(get: () => Promise<Progressing>): Promise<[string, string | undefined][]> {
  const seen: [string, string | undefined][] = [];
  let failed: string | undefined;
  await waitFor(
    'Ready',
    async () => {
      const s = (await get()).status;
      const last = seen.at(-1);
      const now: [string, string | undefined] = [s?.phase ?? '', s?.progress];
      if (last?.[0] !== now[0] || last[1] !== now[1]) seen.push(now);
      if (s?.phase === 'Failed') {
        const ready = s.conditions?.find((x) => x.type === 'Ready');
        failed = `Failed (${ready?.reason}: ${ready?.message}) after ${JSON.stringify(seen)}`;
      }
      return s?.phase === 'Ready';
    },
    { timeoutMs: 4 * IMPORT, intervalMs: 100, abortIf: () => failed },
  );
  return seen;
}

/** The original's contract: nothing while Pending, below 100% before Ready, exactly 100% once Ready; and a percentage in between was seen. */
function expectProgressContract(seen: [string, string | undefined][], { running }: { running: boolean }): void {
  for (const [phase, progress] of seen) {
    if (phase === 'Pending' || phase === '') expect([phase, progress]).toEqual([phase, undefined]);
    else if (phase === 'Ready') expect([phase, progress]).toEqual(['Ready', '100%']);
    else if (progress !== undefined) expect([phase, Number.parseFloat(progress) < 100]).toEqual([phase, true]);
  }
  expect(seen.at(-1)).toEqual(['Ready', '100%']);
  if (running) {
    const between = seen.filter(([phase, p]) => phase === 'Provisioning' && p !== undefined && Number.parseFloat(p) > 0 && Number.parseFloat(p) < 100);
    expect(between.length).toBeGreaterThan(0);
  }
}

describe('the progress contract', () => {
  let slow: FileServer;
  beforeAll(async () => {
    // A remote mirror's pace: 16 MiB at 2 MiB/s keeps the importer running for seconds.
    slow = await serveDir(filesDir, { bytesPerSecond: 2 * MiB });
  });
  afterAll(async () => {
    await slow.close();
  });

  it('a ClusterVirtualImage shows no progress while Pending, the importer percentage while Provisioning, 100% once Ready', async () => {
    const copy: ClusterVirtualImage = {
      ...cvi('prog-copy', ''),
      spec: { dataSource: { type: 'ObjectRef', objectRef: { kind: 'ClusterVirtualImage', name: `prog-${scope.id}` } } },
    };
    await c.clusterImages.create(copy);
    const copyName = copy.metadata.name ?? '';
    await eventually(async () => (await c.clusterImages.get({ name: copyName })).status?.phase === 'Pending', 'copy Pending');
    const copySeen = phasesUntilDone(() => c.clusterImages.get({ name: copyName }));
    await c.clusterImages.create(cvi('prog', `${slow.url}/disk.raw`));
    // Awaited together: a rejection of either is reported here, never left to surface in a later suite.
    const [source, copied] = await Promise.all([phasesUntilDone(() => c.clusterImages.get({ name: `prog-${scope.id}` })), copySeen]);
    expectProgressContract(source, { running: true });
    expectProgressContract(copied, { running: false });
  });

  it('a VirtualImage on a PVC shows the percentage of both steps below 100% and 100% once Ready', async () => {
    await c.images.create(viOnPVC('prog-pvc', `${slow.url}/disk.raw`, storageClass));
    expectProgressContract(await phasesUntilDone(() => c.images.get({ namespace: ns, name: 'prog-pvc' })), { running: true });
  });

  it('a VirtualDisk waits Pending without progress, shows the percentage below 100% while Provisioning, 100% once Ready; a blank one shows 100%', async () => {
    await c.disks.create(
      disk('prog-from-image', {
        dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: 'prog-src' } },
        persistentVolumeClaim: { storageClassName: storageClass },
      }),
    );
    await eventually(async () => (await c.disks.get({ namespace: ns, name: 'prog-from-image' })).status?.phase === 'Pending', 'disk Pending');
    const fromImage = phasesUntilDone(() => c.disks.get({ namespace: ns, name: 'prog-from-image' }));
    await c.images.create({ ...vi('prog-src', `${slow.url}/disk.raw`) });
    await c.disks.create(
      disk('prog-http', { dataSource: { type: 'HTTP', http: { url: `${slow.url}/disk.raw` } }, persistentVolumeClaim: { storageClassName: storageClass } }),
    );
    await c.disks.create(disk('prog-blank', { persistentVolumeClaim: { size: '8Mi', storageClassName: storageClass } }));
    const [http, copied, blank] = await Promise.all([
      phasesUntilDone(() => c.disks.get({ namespace: ns, name: 'prog-http' })),
      fromImage,
      phasesUntilDone(() => c.disks.get({ namespace: ns, name: 'prog-blank' })),
    ]);
    expectProgressContract(http, { running: true });
    expectProgressContract(copied, { running: false });
    expectProgressContract(blank, { running: false });
  });
});

describe('quota', () => {
  it('a disk and an image on PVC that a ResourceQuota refuses report QuotaExceeded with the apiserver message; once the quota has room, they go on', async () => {
    const quotaClass = `quota-${scope.id}`;
    await sc.storageClasses.create({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: quotaClass, labels: { [SCOPE_LABEL]: scope.id } },
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: 'Immediate',
    });
    const quotas = kube.resource(
      { group: '', version: 'v1', plural: 'resourcequotas', kind: 'ResourceQuota', namespaced: true },
      z.looseObject({ metadata: ObjectMetaSchema, status: z.looseObject({ hard: z.record(z.string(), z.string()).optional() }).optional() }),
      TEST_FIELD_MANAGER,
    );
    // No claims at all of this class in the namespace (other classes are not limited).
    const key = `${quotaClass}.storageclass.storage.k8s.io/persistentvolumeclaims`;
    await quotas.create({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'no-claims', namespace: ns }, spec: { hard: { [key]: '0' } } });
    await eventually(
      async () => (await quotas.get({ namespace: ns, name: 'no-claims' })).status?.hard?.[key] === '0',
      'quota counted by the controller-manager',
    );
    try {
      await c.disks.create(disk('over-quota', { persistentVolumeClaim: { size: '8Mi', storageClassName: quotaClass } }));
      await c.images.create(viOnPVC('over-quota', `${files.url}/disk.raw`, quotaClass));
      const refused = <
        T extends {
          metadata: { generation?: number };
          status?: { phase?: string; conditions?: { type: string; reason?: string; observedGeneration?: number }[] };
        },
      >(
        o: T,
      ): T | false => {
        const ready = o.status?.conditions?.find((x) => x.type === 'Ready');
        return ready?.reason === 'QuotaExceeded' && ready.observedGeneration === o.metadata.generation && o.status?.phase === 'Pending' && o;
      };
      for (const get of [() => c.disks.get({ namespace: ns, name: 'over-quota' }), () => c.images.get({ namespace: ns, name: 'over-quota' })]) {
        const got = await eventually(async () => refused(await get()), 'QuotaExceeded', IMPORT);
        expect(got.status?.conditions?.find((x) => x.type === 'Ready')).toMatchObject({
          status: 'False',
          message: expect.stringMatching(
            /^Persistentvolumeclaims ".*" is forbidden: exceeded quota: no-claims, requested: .*persistentvolumeclaims=1/,
          ) as unknown,
        });
        expect(got.status?.progress).toBeUndefined();
      }
      // The blank disk of the unlimited class beside it is untouched.
      expect((await c.disks.get({ namespace: ns, name: 'blank' })).status?.phase).toBe('Ready');
    } finally {
      await quotas.delete({ namespace: ns, name: 'no-claims' });
    }
    const claimed = await readWhen(
      () => c.disks.get({ namespace: ns, name: 'over-quota' }),
      (got) =>
        got.status?.target?.persistentVolumeClaimName !== undefined && got.status.conditions?.find((x) => x.type === 'Ready')?.reason !== 'QuotaExceeded',
      'the disk past the quota',
    );
    expect(claimed.status?.phase).toBe('Provisioning');
    await c.disks.delete({ namespace: ns, name: 'over-quota' });
    await c.images.delete({ namespace: ns, name: 'over-quota' });
    await sc.storageClasses.delete({ name: quotaClass });
  });
});
