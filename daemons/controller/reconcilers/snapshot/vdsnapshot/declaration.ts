import { objectKey } from '../../../../../shared/kube/index.js';
import { someWorkers, type ReconcilerDeclaration } from '../../../declaration.js';
import { keyOf } from '../../../engine/reconciler.js';
import { enqueueOn, statusChanged } from '../../../sources.js';
import { ownedBy, snapshotCaches, snapshotCachesAll, snapshotParts } from '../parts.js';
import { VDS_BY_DISK, vdSnapshotReconciler } from './reconciler.js';

/** VirtualDiskSnapshot (key: namespace/name): itself, its VolumeSnapshot, its disk, the instance of the VM using the disk. */
export const vdSnapshotDeclaration: ReconcilerDeclaration = {
  name: 'vdsnapshot',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches: snapshotCachesAll,
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
