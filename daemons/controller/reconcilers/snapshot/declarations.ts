/** The four snapshot reconcilers (one folder: they share the captured-VM format and the freeze logic). */
import { objectKey, type KubeObject } from '../../../../shared/kube/index.js';
import { someWorkers, type ReconcilerDeclaration, type Wiring } from '../../declaration.js';
import type { ObjectCache } from '../../engine/cache.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn, statusChanged } from '../../sources.js';
import { SNAPSHOT_OPERATION_TYPES, VMOP_BY_VM, vmopReconciler } from '../vmop/index.js';
import { cloneOperation } from './clone.js';
import type { SnapshotCaches } from './deps.js';
import { snapshotParts } from './parts.js';
import { restoreOperation } from './restore.js';
import { VDS_BY_DISK, vdSnapshotReconciler } from './vdsnapshot.js';
import { VMS_BY_VM, vmSnapshotReconciler } from './vmsnapshot.js';
import { VMSOP_BY_SNAPSHOT, vmsopReconciler } from './vmsop.js';

const caches = (w: Wiring): readonly ObjectCache<KubeObject>[] => w.shared(snapshotParts).all;
const snapshotCaches = (w: Wiring): SnapshotCaches => w.shared(snapshotParts).deps.snapshots.caches;
const ownedBy = (o: KubeObject, kind: string): string[] =>
  (o.metadata.ownerReferences ?? []).filter((x) => x.kind === kind).map((x) => objectKey({ namespace: o.metadata.namespace, name: x.name }));

/** VirtualDiskSnapshot (key: namespace/name): itself, its VolumeSnapshot, its disk, the instance of the VM using the disk. */
export const vdSnapshotDeclaration: ReconcilerDeclaration = {
  name: 'vdsnapshot',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches,
  reconcile: (w) => vdSnapshotReconciler(w.shared(snapshotParts).deps),
  sources(w, enqueue) {
    const sc = snapshotCaches(w);
    const ofDisk = (namespace: string | undefined, disk: string): string[] =>
      sc.vdSnapshots.byIndex(VDS_BY_DISK, objectKey({ namespace, name: disk })).map(keyOf);
    enqueueOn(sc.vdSnapshots, enqueue, (o) => [keyOf(o)]);
    if (sc.volumeSnapshots !== undefined) enqueueOn(sc.volumeSnapshots, enqueue, (vs) => ownedBy(vs, 'VirtualDiskSnapshot'));
    // A disk becoming Ready, or its users changing, may let a waiting snapshot go on.
    enqueueOn(w.caches.disks, enqueue, (vd) => ofDisk(vd.metadata.namespace, vd.metadata.name ?? ''), statusChanged);
    // A VM's instance ending lets snapshots of its disks that wait for consistency go on.
    enqueueOn(w.caches.kvvmis, enqueue, (vmi) => {
      const vm = w.caches.vms.get(keyOf(vmi));
      return (vm?.spec.blockDeviceRefs ?? []).filter((ref) => ref.kind === 'VirtualDisk').flatMap((ref) => ofDisk(vmi.metadata.namespace, ref.name));
    });
  },
};

/** VirtualMachineSnapshot (key: namespace/name): itself, its disk snapshots, its VM (phase, instance). */
export const vmSnapshotDeclaration: ReconcilerDeclaration = {
  name: 'vmsnapshot',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches,
  reconcile: (w) => vmSnapshotReconciler(w.shared(snapshotParts).deps),
  sources(w, enqueue) {
    const sc = snapshotCaches(w);
    const ofVM = (o: KubeObject): string[] => sc.vmSnapshots.byIndex(VMS_BY_VM, keyOf(o)).map(keyOf);
    enqueueOn(sc.vmSnapshots, enqueue, (o) => [keyOf(o)]);
    enqueueOn(sc.vdSnapshots, enqueue, (vds) => ownedBy(vds, 'VirtualMachineSnapshot'));
    enqueueOn(w.caches.vms, enqueue, ofVM, statusChanged);
    enqueueOn(w.caches.kvvmis, enqueue, ofVM);
  },
};

/** Restore and Clone: the operation reconciler with the snapshot operations (the original's vmop "snapshot" sub-controller). */
export const vmopSnapshotDeclaration: ReconcilerDeclaration = {
  name: 'vmop-snapshot',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches,
  reconcile(w) {
    const d = w.shared(snapshotParts).deps;
    return vmopReconciler(d, {
      name: 'vmop-snapshot',
      operations: { Restore: restoreOperation(d), Clone: cloneOperation(d) },
      takes: (vmop) => SNAPSHOT_OPERATION_TYPES.has(vmop.spec.type),
    });
  },
  // Themselves, the snapshot a Clone made, their VM (its phase); the rest is looked at again while waiting.
  sources(w, enqueue) {
    const snapshotOps = (list: readonly { spec: { type: string }; metadata: KubeObject['metadata'] }[]): string[] =>
      list.filter((o) => SNAPSHOT_OPERATION_TYPES.has(o.spec.type)).map((o) => keyOf(o as KubeObject));
    enqueueOn(w.caches.vmops, enqueue, (o) => snapshotOps([o]));
    enqueueOn(snapshotCaches(w).vmSnapshots, enqueue, (vms) => ownedBy(vms, 'VirtualMachineOperation'));
    enqueueOn(w.caches.vms, enqueue, (vm) => snapshotOps(w.caches.vmops.byIndex(VMOP_BY_VM, keyOf(vm))), statusChanged);
  },
};

/** VirtualMachineSnapshotOperation (key: namespace/name): itself and its snapshot. */
export const vmsopDeclaration: ReconcilerDeclaration = {
  name: 'vmsop',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches,
  reconcile: (w) => vmsopReconciler(w.shared(snapshotParts).deps),
  sources(w, enqueue) {
    const sc = snapshotCaches(w);
    enqueueOn(sc.vmsops, enqueue, (o) => [keyOf(o)]);
    enqueueOn(sc.vmSnapshots, enqueue, (vms) => sc.vmsops.byIndex(VMSOP_BY_SNAPSHOT, keyOf(vms)).map(keyOf));
  },
};
