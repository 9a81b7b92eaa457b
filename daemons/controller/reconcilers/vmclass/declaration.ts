import type { ReconcilerDeclaration } from '../../declaration.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn, specOrMetaChanged } from '../../sources.js';
import { vmClassReconciler } from './index.js';

/** VirtualMachineClass status (key: its name): itself, every node change, the VMs that use it. */
export const vmClassDeclaration: ReconcilerDeclaration = {
  name: 'vmclass',
  workers: () => 1,
  reconcile: (w) => vmClassReconciler(w.deps),
  sources({ caches }, enqueue) {
    enqueueOn(caches.classes, enqueue, (c) => [keyOf(c)], specOrMetaChanged);
    enqueueOn(caches.nodes, enqueue, () => caches.classes.list().map(keyOf));
    enqueueOn(
      caches.vms,
      enqueue,
      (vm) => [vm.spec.virtualMachineClassName],
      (vm, old) => vm.spec.virtualMachineClassName !== old.spec.virtualMachineClassName || vm.metadata.deletionTimestamp !== old.metadata.deletionTimestamp,
    );
  },
};
