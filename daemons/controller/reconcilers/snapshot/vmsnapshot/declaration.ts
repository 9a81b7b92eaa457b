import type { KubeObject } from '../../../../../shared/kube/index.js';
import { someWorkers, type ReconcilerDeclaration } from '../../../declaration.js';
import { keyOf } from '../../../engine/reconciler.js';
import { enqueueOn, statusChanged } from '../../../sources.js';
import { ownedBy, snapshotCaches, snapshotCachesAll, snapshotParts } from '../parts.js';
import { VMS_BY_VM, vmSnapshotReconciler } from './reconciler.js';

/** VirtualMachineSnapshot (key: namespace/name): itself, its disk snapshots, its VM (phase, instance). */
export const vmSnapshotDeclaration: ReconcilerDeclaration = {
  name: 'vmsnapshot',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches: snapshotCachesAll,
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
