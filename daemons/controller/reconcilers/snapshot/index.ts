/**
 * The snapshot reconcilers (VirtualDiskSnapshot, VirtualMachineSnapshot) with their caches and event
 * sources. They run beside the storage reconcilers (they read disks' PVCs from the storage caches);
 * VolumeSnapshots are watched only when the cluster serves snapshot.storage.k8s.io/v1 (probed once at
 * start; without it every disk snapshot fails with that reason).
 */
import { volumeSnapshotDescriptor } from '../../../../shared/api/k8s/volume-snapshot.js';
import { NotFoundError } from '../../../../shared/errors/index.js';
import type { KubeClient, KubeObject } from '../../../../shared/kube/index.js';
import type { Logger } from '../../../../shared/log/index.js';
import { informerCache, scopesOf } from '../../caches.js';
import type { Caches } from '../../deps.js';
import type { ObjectCache } from '../../engine/cache.js';
import { keyOf } from '../../engine/reconciler.js';
import type { Runner } from '../../engine/runner.js';
import { enqueueOn, statusChanged } from '../../sources.js';
import type { StorageDeps } from '../provisioning/helpers.js';
import type { MakeRunner } from '../storage.js';
import { makeSnapshotClients, type SnapshotCaches, type SnapshotDeps } from './deps.js';
import { VDS_BY_DISK, vdSnapshotReconciler } from './vdsnapshot.js';
import { VMS_BY_VM, vmSnapshotReconciler } from './vmsnapshot.js';
import { SNAPSHOT_OPERATION_TYPES, VMOP_BY_VM, vmopReconciler } from '../vmop/index.js';
import { cloneOperation } from './clone.js';
import { restoreOperation } from './restore.js';
import { VMSOP_BY_SNAPSHOT, vmsopReconciler } from './vmsop.js';
import { subresourceFilesystems, type GuestFilesystems } from './freeze.js';
import { objectKey } from '../../../../shared/kube/index.js';

export interface SnapshotOptions {
  kube: KubeClient;
  signal: AbortSignal;
  logger: Logger;
  /** Whether the cluster serves VolumeSnapshots (volumeSnapshotsServed). */
  volumeSnapshots: boolean;
  /** How running VMs are frozen and thawed (the subresource API by default). */
  filesystems?: GuestFilesystems | undefined;
}

export interface SnapshotReconcilers {
  readonly deps: SnapshotDeps;
  readonly caches: ObjectCache<KubeObject>[];
  readonly runners: { vdsnapshot: Runner; vmsnapshot: Runner; vmopSnapshot: Runner; vmsop: Runner };
}

export function snapshotReconcilers(storage: StorageDeps, caches0: Caches, opts: SnapshotOptions, runner: MakeRunner): SnapshotReconcilers {
  const clients = makeSnapshotClients(opts.kube);
  const { namespaced } = scopesOf(storage.config);
  const caches: SnapshotCaches = {
    vdSnapshots: informerCache(clients.vdSnapshots, namespaced, opts.signal, opts.logger),
    vmSnapshots: informerCache(clients.vmSnapshots, namespaced, opts.signal, opts.logger),
    vmsops: informerCache(clients.vmsops, namespaced, opts.signal, opts.logger),
    volumeSnapshots: opts.volumeSnapshots ? informerCache(clients.volumeSnapshots, namespaced, opts.signal, opts.logger) : undefined,
  };
  caches.vdSnapshots.addIndex(VDS_BY_DISK, (vds) => [objectKey({ namespace: vds.metadata.namespace, name: vds.spec.virtualDiskName })]);
  caches.vmsops.addIndex(VMSOP_BY_SNAPSHOT, (op) => [objectKey({ namespace: op.metadata.namespace, name: op.spec.virtualMachineSnapshotName })]);
  caches.vmSnapshots.addIndex(VMS_BY_VM, (vms) => [objectKey({ namespace: vms.metadata.namespace, name: vms.spec.virtualMachineName })]);
  const d: SnapshotDeps = { ...storage, snapshots: { clients, caches, filesystems: opts.filesystems ?? subresourceFilesystems(opts.kube) } };
  const some = Math.max(1, Math.floor(storage.config.RECONCILE_WORKERS / 2));
  // Restore and Clone: the operation reconciler with the snapshot operations (the original's vmop "snapshot" sub-controller).
  const vmopSnapshot = vmopReconciler(d, {
    name: 'vmop-snapshot',
    operations: { Restore: restoreOperation(d), Clone: cloneOperation(d) },
    takes: (vmop) => SNAPSHOT_OPERATION_TYPES.has(vmop.spec.type),
  });
  const runners = {
    vdsnapshot: runner('vdsnapshot', vdSnapshotReconciler(d), some),
    vmsnapshot: runner('vmsnapshot', vmSnapshotReconciler(d), some),
    vmopSnapshot: runner('vmop-snapshot', vmopSnapshot, some),
    vmsop: runner('vmsop', vmsopReconciler(d), some),
  };
  wireSnapshotSources(caches0, caches, runners);
  const all = [caches.vdSnapshots, caches.vmSnapshots, caches.vmsops, caches.volumeSnapshots].filter((c) => c !== undefined);
  return { deps: d, caches: all as unknown as ObjectCache<KubeObject>[], runners };
}

function wireSnapshotSources(caches: Caches, sc: SnapshotCaches, r: SnapshotReconcilers['runners']): void {
  const ns = (o: KubeObject): string => o.metadata.namespace ?? '';
  const ownedBy = (o: KubeObject, kind: string): string[] =>
    (o.metadata.ownerReferences ?? []).filter((x) => x.kind === kind).map((x) => objectKey({ namespace: o.metadata.namespace, name: x.name }));
  const snapshotsOfDisk = (namespace: string, disk: string): string[] => sc.vdSnapshots.byIndex(VDS_BY_DISK, `${namespace}/${disk}`).map(keyOf);
  enqueueOn(sc.vdSnapshots, r.vdsnapshot, (o) => [keyOf(o)]);
  if (sc.volumeSnapshots !== undefined) enqueueOn(sc.volumeSnapshots, r.vdsnapshot, (vs) => ownedBy(vs, 'VirtualDiskSnapshot'));
  // A disk becoming Ready, or its users changing, may let a waiting snapshot go on.
  enqueueOn(caches.disks, r.vdsnapshot, (vd) => snapshotsOfDisk(ns(vd), vd.metadata.name ?? ''), statusChanged);
  // A VM's instance ending lets snapshots of its disks that wait for consistency go on.
  enqueueOn(caches.kvvmis, r.vdsnapshot, (vmi) => {
    const vm = caches.vms.get(keyOf(vmi));
    return (vm?.spec.blockDeviceRefs ?? []).filter((ref) => ref.kind === 'VirtualDisk').flatMap((ref) => snapshotsOfDisk(ns(vmi), ref.name));
  });
  // VM snapshots: themselves, their disk snapshots, and their VM (its phase, its instance).
  const snapshotsOfVM = (o: KubeObject): string[] => sc.vmSnapshots.byIndex(VMS_BY_VM, keyOf(o)).map(keyOf);
  enqueueOn(sc.vmSnapshots, r.vmsnapshot, (o) => [keyOf(o)]);
  enqueueOn(sc.vdSnapshots, r.vmsnapshot, (vds) => ownedBy(vds, 'VirtualMachineSnapshot'));
  enqueueOn(caches.vms, r.vmsnapshot, snapshotsOfVM, statusChanged);
  enqueueOn(caches.kvvmis, r.vmsnapshot, snapshotsOfVM);
  // Restore and Clone: themselves, the snapshot a Clone made, their VM (its phase); the rest is looked at again while waiting.
  const snapshotOps = (list: readonly { spec: { type: string }; metadata: KubeObject['metadata'] }[]): string[] =>
    list.filter((o) => SNAPSHOT_OPERATION_TYPES.has(o.spec.type)).map((o) => keyOf(o as KubeObject));
  enqueueOn(caches.vmops, r.vmopSnapshot, (o) => snapshotOps([o]));
  enqueueOn(sc.vmSnapshots, r.vmopSnapshot, (vms) => ownedBy(vms, 'VirtualMachineOperation'));
  enqueueOn(caches.vms, r.vmopSnapshot, (vm) => snapshotOps(caches.vmops.byIndex(VMOP_BY_VM, keyOf(vm))), statusChanged);
  // Snapshot operations: themselves and their snapshot.
  enqueueOn(sc.vmsops, r.vmsop, (o) => [keyOf(o)]);
  enqueueOn(sc.vmSnapshots, r.vmsop, (vms) => sc.vmsops.byIndex(VMSOP_BY_SNAPSHOT, keyOf(vms)).map(keyOf));
}

/** Whether the apiserver serves VolumeSnapshots (404: not, the disk snapshots fail saying so); any other answer counts as served, the informer retries. */
export async function volumeSnapshotsServed(kube: KubeClient, signal: AbortSignal, log: Logger): Promise<boolean> {
  try {
    await kube.rest.request({
      method: 'GET',
      path: `/apis/${volumeSnapshotDescriptor.group}/${volumeSnapshotDescriptor.version}`,
      signal,
      what: 'probe snapshot.storage.k8s.io/v1',
    });
    return true;
  } catch (err: unknown) {
    if (!(err instanceof NotFoundError)) return true;
    log.info('snapshot.storage.k8s.io/v1 is not served: disk snapshots will fail until a CSI snapshot controller is installed and the controller restarts');
    return false;
  }
}
