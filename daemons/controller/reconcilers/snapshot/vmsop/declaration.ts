import { someWorkers, type ReconcilerDeclaration } from '../../../declaration.js';
import { keyOf } from '../../../engine/reconciler.js';
import { enqueueOn } from '../../../sources.js';
import { snapshotCaches, snapshotCachesAll, snapshotParts } from '../parts.js';
import { VMSOP_BY_SNAPSHOT, vmsopReconciler } from './reconciler.js';

/** VirtualMachineSnapshotOperation (key: namespace/name): itself and its snapshot. */
export const vmsopDeclaration: ReconcilerDeclaration = {
  name: 'vmsop',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches: snapshotCachesAll,
  reconcile: (w) => vmsopReconciler(w.shared(snapshotParts).deps),
  sources(w, enqueue) {
    const sc = snapshotCaches(w);
    enqueueOn(sc.vmsops, enqueue, (o) => [keyOf(o)]);
    enqueueOn(sc.vmSnapshots, enqueue, (vms) => sc.vmsops.byIndex(VMSOP_BY_SNAPSHOT, keyOf(vms)).map(keyOf));
  },
};
