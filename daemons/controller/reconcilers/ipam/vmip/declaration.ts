import { objectKey } from '../../../../../shared/kube/index.js';
import { someWorkers, type ReconcilerDeclaration } from '../../../declaration.js';
import { keyOf } from '../../../engine/reconciler.js';
import { enqueueOn, specOrMetaChanged } from '../../../sources.js';
import { autoAddressName } from '../../vm/handlers/ipam.js';
import { vmipReconciler } from './reconciler.js';

/** VirtualMachineIPAddress (key: namespace/name): itself, its lease, the VMs naming it, the subnets. */
export const vmipDeclaration: ReconcilerDeclaration = {
  name: 'vmip',
  workers: someWorkers,
  reconcile: (w) => vmipReconciler(w.deps),
  sources({ caches, cidrs }, enqueue) {
    enqueueOn(caches.vmips, enqueue, (ip) => [keyOf(ip)], specOrMetaChanged);
    enqueueOn(
      caches.leases,
      enqueue,
      (l) => {
        const ref = l.spec.virtualMachineIPAddressRef;
        return ref === undefined || ref.name === '' ? [] : [objectKey(ref)];
      },
      specOrMetaChanged,
    );
    enqueueOn(
      caches.vms,
      enqueue,
      (vm) => {
        const names = [vm.spec.virtualMachineIPAddressName, vm.status?.virtualMachineIPAddressName, autoAddressName(vm)];
        return [...new Set(names.filter((n): n is string => n !== undefined && n !== ''))].map((n) => objectKey({ namespace: vm.metadata.namespace, name: n }));
      },
      (vm, old) =>
        vm.spec.virtualMachineIPAddressName !== old.spec.virtualMachineIPAddressName ||
        vm.status?.virtualMachineIPAddressName !== old.status?.virtualMachineIPAddressName ||
        vm.metadata.deletionTimestamp !== old.metadata.deletionTimestamp,
    );
    enqueueOn(
      caches.kvvmis,
      enqueue,
      (vmi) => {
        const name = caches.vms.get(keyOf(vmi))?.status?.virtualMachineIPAddressName;
        return name === undefined ? [] : [objectKey({ namespace: vmi.metadata.namespace, name })];
      },
      () => false,
    );
    // The subnets changed: an address may be in or out of them now.
    cidrs.onChange(() => {
      for (const ip of caches.vmips.list()) enqueue(objectKey(ip.metadata));
    });
  },
};
