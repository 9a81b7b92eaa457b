import type { KubeObject } from '../../../../../shared/kube/index.js';
import { someWorkers, type ReconcilerDeclaration } from '../../../declaration.js';
import { keyOf } from '../../../engine/reconciler.js';
import { enqueueOn, statusChanged } from '../../../sources.js';
import { SNAPSHOT_OPERATION_TYPES, VMOP_BY_VM, vmopReconciler } from '../../vmop/index.js';
import { cloneOperation } from '../clone.js';
import { ownedBy, snapshotCaches, snapshotCachesAll, snapshotParts } from '../parts.js';
import { restoreOperation } from './restore.js';

/** Restore and Clone: the operation reconciler with the snapshot operations (the original's vmop "snapshot" sub-controller). */
export const vmopSnapshotDeclaration: ReconcilerDeclaration = {
  name: 'vmop-snapshot',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches: snapshotCachesAll,
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
