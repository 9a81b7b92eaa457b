import { VMCondition } from '../../../../shared/api/conditions/index.js';
import { objectKey } from '../../../../shared/kube/index.js';
import type { ReconcilerDeclaration } from '../../declaration.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn } from '../../sources.js';
import { evacuationReconciler } from './reconciler.js';

const evictionRequired = (conditions: ReadonlyArray<{ type: string; status: string }> | undefined): string =>
  conditions?.find((c) => c.type === VMCondition.EvictionRequired.type)?.status ?? '';

/** Evacuation (key: the VM's namespace/name): the VM's EvictionRequired and phase, its instance's mark, and its operations. */
export const evacuationDeclaration: ReconcilerDeclaration = {
  name: 'evacuation',
  workers: () => 1,
  reconcile: (w) =>
    evacuationReconciler({
      vms: w.caches.vms,
      vmops: w.caches.vmops,
      kvvmis: w.caches.kvvmis,
      vmopClient: w.clients.vmops,
      kvvmiClient: w.clients.kvvmis,
      logger: w.log.child({ controller: 'evacuation' }),
    }),
  sources({ caches }, enqueue) {
    enqueueOn(
      caches.vms,
      enqueue,
      (vm) => [keyOf(vm)],
      (vm, old) =>
        evictionRequired(vm.status?.conditions) !== evictionRequired(old.status?.conditions) ||
        vm.status?.phase !== old.status?.phase ||
        vm.metadata.deletionTimestamp !== old.metadata.deletionTimestamp,
    );
    enqueueOn(
      caches.kvvmis,
      enqueue,
      (vmi) => [keyOf(vmi)],
      (vmi, old) => vmi.status?.evacuationNodeName !== old.status?.evacuationNodeName,
    );
    enqueueOn(caches.vmops, enqueue, (op) => [objectKey({ namespace: op.metadata.namespace, name: op.spec.virtualMachineName })]);
  },
};
