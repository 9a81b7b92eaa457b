import { objectKey } from '../../../../shared/kube/index.js';
import type { ReconcilerDeclaration } from '../../declaration.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn } from '../../sources.js';
import { volumeMigrationReconciler, pendingVolumeChange } from './reconciler.js';

/** Volume migration (key: the VM's namespace/name): its instance's volume change, and its operations. */
export const volumeMigrationDeclaration: ReconcilerDeclaration = {
  name: 'volume-migration',
  workers: () => 1,
  reconcile: (w) =>
    volumeMigrationReconciler({
      vms: w.caches.vms,
      vmops: w.caches.vmops,
      kvvmis: w.caches.kvvmis,
      vmopClient: w.clients.vmops,
      logger: w.log.child({ controller: 'volume-migration' }),
    }),
  sources({ caches }, enqueue) {
    enqueueOn(
      caches.kvvmis,
      enqueue,
      (vmi) => [keyOf(vmi)],
      (vmi, old) => pendingVolumeChange(vmi) !== pendingVolumeChange(old),
    );
    enqueueOn(caches.vmops, enqueue, (op) => [objectKey({ namespace: op.metadata.namespace, name: op.spec.virtualMachineName })]);
  },
};
