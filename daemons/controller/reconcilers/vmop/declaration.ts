import { objectKey } from '../../../../shared/kube/index.js';
import { someWorkers, type ReconcilerDeclaration } from '../../declaration.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn, phaseOrMetaChanged } from '../../sources.js';
import { VMOP_BY_VM, vmopReconciler } from './index.js';

/** VirtualMachineOperation (key: namespace/name): itself, its siblings on the same VM, its VM, instance and migration. */
export const vmopDeclaration: ReconcilerDeclaration = {
  name: 'vmop',
  workers: someWorkers,
  reconcile: (w) => vmopReconciler(w.deps),
  sources({ caches }, enqueue) {
    const opsOf = (vmKey: string): string[] => caches.vmops.byIndex(VMOP_BY_VM, vmKey).map(keyOf);
    // One operation runs at a time per VM: the siblings wait for its phase.
    enqueueOn(
      caches.vmops,
      enqueue,
      (op) => [keyOf(op), ...opsOf(objectKey({ namespace: op.metadata.namespace, name: op.spec.virtualMachineName }))],
      phaseOrMetaChanged,
    );
    enqueueOn(caches.vms, enqueue, (vm) => opsOf(keyOf(vm)));
    enqueueOn(caches.kvvms, enqueue, (o) => opsOf(keyOf(o)));
    enqueueOn(caches.kvvmis, enqueue, (o) => opsOf(keyOf(o)));
    enqueueOn(caches.migrations, enqueue, (m) => {
      const owner = m.metadata.ownerReferences?.find((o) => o.kind === 'VirtualMachineOperation');
      return owner === undefined ? [] : [objectKey({ namespace: m.metadata.namespace, name: owner.name })];
    });
  },
};
