/**
 * The storage reconcilers under exactly the RBAC the install gives the controller
 * (knative/rbac/components/controller.yaml, its client impersonating the ServiceAccount): an image
 * imported through an importer Pod, a disk with its PVC on a StorageClass, status and finalizers, and
 * the hot-plug subresources it may call, disk and VM snapshots, a Clone, a Restore and a snapshot
 * operation. A rule missing from the manifest fails a step with 403.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_VERSION } from '../../../../shared/api/resources/common.js';
import { KubeClient } from '../../../../shared/kube/index.js';
import { startLocalRegistry, type LocalRegistry } from '../../../env/local-registry.js';
import { makeImage, serveDir, type FileServer } from '../../../../shared/testing/disk-images.js';
import { startController, type RunningController } from '../../../../daemons/controller/controller.js';
import { makeStorageClients, type StorageClients } from '../../../../daemons/controller/reconcilers/provisioning/kube.js';
import { freshNamespace, impersonatingKubeConfig, kubectl } from '../../../env/index.js';
import { SCOPE_LABEL, TEST_FIELD_MANAGER, controllerConfig, eventually, newScope, phaseIs, readWhen, useCluster, type Scope } from '../fixtures.js';
import { node, vm, vmClass, vmop } from '../builders.js';
import { KubeVirtSimulator } from '../../../../platform/simulators/kubevirt-simulator/simulator.js';
import { KubeVirtHotplug } from './kubevirt-hotplug.js';
import { StorageSimulator } from '../../../../platform/simulators/storage-simulator/simulator.js';
import { SimulatedSnapshotController } from './snapshot-controller-simulated.js';
import { VolumeSnapshotClassSchema, volumeSnapshotClassDescriptor } from '../../../../shared/api/k8s/volume-snapshot.js';
import { makeSnapshotClients } from '../../../../daemons/controller/reconcilers/snapshot/deps.js';

const KNATIVE = fileURLToPath(new URL('../../../../knative/', import.meta.url));
const SERVICE_ACCOUNT = 'system:serviceaccount:d8-virtualization:controller';

const t = useCluster();
let registry: LocalRegistry;
let files: FileServer;
let dir: string;

beforeAll(async () => {
  for (const f of ['namespace.yaml', 'rbac/components/controller.yaml']) {
    const res = await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=disks-rbac-test', '-f', `${KNATIVE}${f}`]);
    if (res.code !== 0) throw new Error(`kubectl apply ${f}: ${res.stderr}`);
  }
  registry = await startLocalRegistry();
  dir = mkdtempSync(join(tmpdir(), 'disks-sa-'));
  makeImage(dir, 'disk.raw', 'raw', 8);
  files = await serveDir(dir);
});

afterAll(async () => {
  await files.close();
  await registry.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The world of one test: a StorageClass of its scope, the storage simulator for it, `extra` (made
 * before the controller starts), and the controller with storage reconcilers under the controller's
 * ServiceAccount; all removed after the test.
 */
async function storageWorld(
  scope: Scope,
  prefix: string,
  env: Record<string, string>,
  extra?: (storageClass: string, sc: StorageClients) => Promise<void>,
): Promise<{ storageClass: string; storage: StorageSimulator }> {
  const ns = scope.namespace;
  const sc = makeStorageClients(t.kube, TEST_FIELD_MANAGER);
  const storageClass = `${prefix}-${scope.id}`;
  await sc.storageClasses.create({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: storageClass, labels: { [SCOPE_LABEL]: scope.id } },
    provisioner: 'kubernetes.io/no-provisioner',
    volumeBindingMode: 'Immediate',
  });
  t.onCleanup(() => sc.storageClasses.delete({ name: storageClass }));
  const volumesDir = mkdtempSync(join(tmpdir(), `${prefix}-volumes-`));
  const storage = new StorageSimulator(t.kube, { volumesDir, storageClasses: [storageClass], namespace: ns, requireNode: false });
  await storage.start();
  t.onCleanup(async () => {
    await storage.stop();
    rmSync(volumesDir, { recursive: true, force: true });
  });
  await extra?.(storageClass, sc);
  const kube = new KubeClient(impersonatingKubeConfig(SERVICE_ACCOUNT));
  t.onCleanup(() => Promise.resolve(kube.close()));
  const abort = new AbortController();
  const config = controllerConfig(scope, { STORAGE_RECONCILERS: 'true', POD_NAMESPACE: ns, ...env });
  const hotplug = new KubeVirtHotplug(t.c.kvvmis);
  await hotplug.start();
  t.onCleanup(() => hotplug.stop());
  const running: RunningController = await startController({ kube, config, signal: abort.signal, hotplug });
  t.onCleanup(async () => {
    abort.abort();
    await running.stop();
  });
  return { storageClass, storage };
}

describe('the storage reconcilers with only the controller ServiceAccount rights', () => {
  it('may call the hot-plug and freeze subresources and nothing else there', async () => {
    // A SubjectAccessReview (kubectl can-i would need the aggregated API's discovery, absent here).
    const can = async (verb: string, sub: string): Promise<boolean> => {
      const review = (await t.kube.rest.request({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: SERVICE_ACCOUNT,
            groups: ['system:serviceaccounts', 'system:serviceaccounts:d8-virtualization', 'system:authenticated'],
            resourceAttributes: {
              group: 'subresources.virtualization.deckhouse.io',
              resource: 'virtualmachines',
              subresource: sub,
              verb,
              namespace: 'any',
              name: 'vm',
            },
          },
        },
        what: `review ${verb} virtualmachines/${sub}`,
      })) as { status?: { allowed?: boolean } };
      return review.status?.allowed === true;
    };
    expect(await can('update', 'addvolume')).toBe(true);
    expect(await can('update', 'removevolume')).toBe(true);
    expect(await can('update', 'freeze')).toBe(true);
    expect(await can('update', 'unfreeze')).toBe(true);
    expect(await can('get', 'console')).toBe(false);
  });

  it('imports an image through an importer Pod and provisions a disk on its PVC', async () => {
    const scope = newScope(await freshNamespace('disks-sa'));
    const ns = scope.namespace;
    const { storage, storageClass } = await storageWorld(scope, 'disks-sa', { DVCR_ADDRESS: registry.host, DVCR_PLAIN_HTTP: 'true' });

    await t.c.images.create({
      apiVersion: API_VERSION,
      kind: 'VirtualImage',
      metadata: { name: 'img', namespace: ns },
      spec: { storage: 'ContainerRegistry', dataSource: { type: 'HTTP', http: { url: `${files.url}/disk.raw` } } },
    });
    const img = await readWhen(() => t.c.images.get({ namespace: ns, name: 'img' }), phaseIs('Ready'), 'image Ready');
    expect(img.status).toMatchObject({ format: 'raw', size: { unpackedBytes: String(8 * 1024 * 1024) } });
    expect(img.metadata.finalizers).toContain('virtualization.deckhouse.io/vi-cleanup');

    await t.c.disks.create({
      apiVersion: API_VERSION,
      kind: 'VirtualDisk',
      metadata: { name: 'disk', namespace: ns },
      spec: { dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: 'img' } }, persistentVolumeClaim: { storageClassName: storageClass } },
    });
    const vd = await readWhen(() => t.c.disks.get({ namespace: ns, name: 'disk' }), phaseIs('Ready'), 'disk Ready');
    expect(vd.status?.capacity).toBe(String(8 * 1024 * 1024));
    expect(storage.runs.map((r) => r.code)).toEqual([0, 0]);
  }, 90_000);

  it('snapshots a disk and makes a disk from it; snapshots, clones and restores a stopped VM, and makes a VM from its snapshot', async () => {
    const scope = newScope(await freshNamespace('snap-sa'));
    const ns = scope.namespace;
    const { storageClass } = await storageWorld(scope, 'snap-sa', {}, async (name, sc) => {
      const classes = t.kube.resource(volumeSnapshotClassDescriptor, VolumeSnapshotClassSchema, TEST_FIELD_MANAGER);
      await classes.create({
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotClass',
        metadata: { name, annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } },
        driver: 'kubernetes.io/no-provisioner',
        deletionPolicy: 'Delete',
      });
      t.onCleanup(() => classes.delete({ name }));
      const snapshotter = new SimulatedSnapshotController(t.kube, sc, ns);
      snapshotter.start();
      t.onCleanup(() => snapshotter.stop());
    });

    await t.c.disks.create({
      apiVersion: API_VERSION,
      kind: 'VirtualDisk',
      metadata: { name: 'disk', namespace: ns },
      spec: { persistentVolumeClaim: { size: '1Gi', storageClassName: storageClass } },
    });
    await eventually(async () => (await t.c.disks.get({ namespace: ns, name: 'disk' })).status?.phase === 'Ready', 'disk Ready');
    const snap = makeSnapshotClients(t.kube, TEST_FIELD_MANAGER);
    await snap.vdSnapshots.create({
      apiVersion: API_VERSION,
      kind: 'VirtualDiskSnapshot',
      metadata: { name: 'snap', namespace: ns },
      spec: { virtualDiskName: 'disk', requiredConsistency: true },
    });
    const got = await eventually(async () => {
      const vds = await snap.vdSnapshots.get({ namespace: ns, name: 'snap' });
      return vds.status?.phase === 'Ready' && vds;
    }, 'disk snapshot Ready');
    expect(got.metadata.finalizers).toContain('virtualization.deckhouse.io/vdsnapshot-cleanup');
    const vs = await snap.volumeSnapshots.get({ namespace: ns, name: got.status?.volumeSnapshotName ?? '' });
    expect(vs.metadata.finalizers).toEqual(['virtualization.deckhouse.io/vdsnapshot-protection']);
    await t.c.disks.create({
      apiVersion: API_VERSION,
      kind: 'VirtualDisk',
      metadata: { name: 'restored', namespace: ns },
      spec: {
        dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualDiskSnapshot', name: 'snap' } },
        persistentVolumeClaim: { storageClassName: storageClass },
      },
    });
    await eventually(async () => (await t.c.disks.get({ namespace: ns, name: 'restored' })).status?.phase === 'Ready', 'disk from the snapshot Ready');
    await snap.vdSnapshots.delete({ namespace: ns, name: 'snap' });
    await eventually(async () => (await snap.vdSnapshots.list({ namespace: ns })).items.length === 0, 'disk snapshot gone');

    // A VM snapshot, a Clone and a Restore of a stopped VM (KubeVirt played by the simulator).
    await t.c.nodes.create(node(scope, 'node-1'));
    const className = (await t.c.classes.create(vmClass(scope, 'generic'))).metadata.name ?? '';
    const kubevirt = new KubeVirtSimulator(t.kube, { namespace: ns, autoRunOn: `node-1-${scope.id}` });
    await kubevirt.start();
    t.onCleanup(() => kubevirt.stop());
    await t.c.vms.create(vm(scope, 'src', className, { runPolicy: 'AlwaysOff', blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'disk' }] }));
    await eventually(async () => (await t.c.vms.get({ namespace: ns, name: 'src' })).status?.phase === 'Stopped', 'VM Stopped');
    await snap.vmSnapshots.create({
      apiVersion: API_VERSION,
      kind: 'VirtualMachineSnapshot',
      metadata: { name: 'src-snap', namespace: ns },
      spec: { virtualMachineName: 'src', keepIPAddress: 'Never', requiredConsistency: true },
    });
    await eventually(async () => (await snap.vmSnapshots.get({ namespace: ns, name: 'src-snap' })).status?.phase === 'Ready', 'VM snapshot Ready');
    const finished = async (name: string): Promise<string | undefined> =>
      eventually(async () => {
        const phase = (await t.c.vmops.get({ namespace: ns, name })).status?.phase;
        return (phase === 'Completed' || phase === 'Failed') && phase;
      }, `operation ${name} finished`);
    await t.c.vmops.create(vmop(scope, 'clone', 'src', 'Clone', { clone: { mode: 'Strict', customization: { namePrefix: 'copy-' } } }));
    expect(await finished('clone')).toBe('Completed');
    expect((await t.c.vms.get({ namespace: ns, name: 'copy-src' })).spec.blockDeviceRefs).toEqual([{ kind: 'VirtualDisk', name: 'copy-disk' }]);
    await t.c.vmops.create(vmop(scope, 'restore', 'src', 'Restore', { restore: { mode: 'Strict', virtualMachineSnapshotName: 'src-snap' } }));
    expect(await finished('restore')).toBe('Completed');
    await snap.vmsops.create({
      apiVersion: API_VERSION,
      kind: 'VirtualMachineSnapshotOperation',
      metadata: { name: 'create', namespace: ns },
      spec: {
        type: 'CreateVirtualMachine',
        virtualMachineSnapshotName: 'src-snap',
        createVirtualMachine: { mode: 'Strict', customization: { namePrefix: 'new-' } },
      },
    });
    await eventually(async () => (await snap.vmsops.get({ namespace: ns, name: 'create' })).status?.phase === 'Completed', 'snapshot operation Completed');
    expect((await t.c.vms.get({ namespace: ns, name: 'new-src' })).spec.blockDeviceRefs).toEqual([{ kind: 'VirtualDisk', name: 'new-disk' }]);
  }, 120_000);
});
