import { objectKey, type KubeObject } from '../../../../shared/kube/index.js';
import { someWorkers, type ReconcilerDeclaration } from '../../declaration.js';
import type { ObjectCache } from '../../engine/cache.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn, specOrMetaChanged } from '../../sources.js';
import { vmmacLeaseReconciler } from './lease.js';
import { LEASE_BY_VMMAC, VMMAC_BY_VM_UID, macParts } from './parts.js';
import { deepEqual } from '../../engine/merge-diff.js';
import { vmmacReconciler } from './vmmac.js';

const macCaches = (w: Parameters<NonNullable<ReconcilerDeclaration['caches']>>[0]): ObjectCache<KubeObject>[] => {
  const { vmmacs, leases } = w.shared(macParts);
  return [vmmacs, leases] as unknown as ObjectCache<KubeObject>[];
};

/** VirtualMachineMACAddress (key: namespace/name): itself, its lease, the VMs naming it. */
export const vmmacDeclaration: ReconcilerDeclaration = {
  name: 'vmmac',
  workers: someWorkers,
  caches: macCaches,
  reconcile: (w) => vmmacReconciler(w.deps, w.shared(macParts)),
  sources(w, enqueue) {
    const { vmmacs, leases } = w.shared(macParts);
    enqueueOn(vmmacs, enqueue, (m) => [keyOf(m)], specOrMetaChanged);
    enqueueOn(leases, enqueue, (l) => {
      const ref = l.spec.virtualMachineMACAddressRef;
      return ref === undefined ? [] : [objectKey(ref)];
    });
    enqueueOn(
      w.caches.vms,
      enqueue,
      (vm) =>
        (vm.spec.networks ?? []).flatMap((n) =>
          n.virtualMachineMACAddressName === undefined ? [] : [objectKey({ namespace: vm.metadata.namespace, name: n.virtualMachineMACAddressName })],
        ),
      specOrMetaChanged,
    );
    // The addresses made for a VM: attached while its status.networks or its internal VM shows them.
    const owned = (o: KubeObject): string[] => vmmacs.byIndex(VMMAC_BY_VM_UID, `${o.metadata.namespace ?? ''}/${o.metadata.uid ?? ''}`).map(keyOf);
    enqueueOn(w.caches.vms, enqueue, owned, (vm, old) => specOrMetaChanged(vm, old) || !deepEqual(vm.status?.networks, old.status?.networks));
    enqueueOn(w.caches.kvvms, enqueue, (kvvm) => {
      const vm = w.caches.vms.get(keyOf(kvvm));
      return vm === undefined ? [] : owned(vm);
    });
  },
};

/** VirtualMachineMACAddressLease (key: its name): itself and its address. */
export const vmmacLeaseDeclaration: ReconcilerDeclaration = {
  name: 'vmmaclease',
  workers: someWorkers,
  caches: macCaches,
  reconcile: (w) => vmmacLeaseReconciler(w.shared(macParts), w.config.WATCH_NAMESPACE),
  sources(w, enqueue) {
    const { vmmacs, leases } = w.shared(macParts);
    enqueueOn(leases, enqueue, (l) => [keyOf(l)], specOrMetaChanged);
    enqueueOn(vmmacs, enqueue, (m) => leases.byIndex(LEASE_BY_VMMAC, keyOf(m)).map(keyOf), specOrMetaChanged);
  },
};
