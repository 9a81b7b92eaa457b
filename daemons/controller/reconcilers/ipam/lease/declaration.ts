import { someWorkers, type ReconcilerDeclaration } from '../../../declaration.js';
import { keyOf } from '../../../engine/reconciler.js';
import { enqueueOn, specOrMetaChanged } from '../../../sources.js';
import { LEASE_BY_VMIP } from '../vmip/reconciler.js';
import { leaseReconciler } from './reconciler.js';

/** VirtualMachineIPAddressLease (key: its name): itself and its address. */
export const leaseDeclaration: ReconcilerDeclaration = {
  name: 'vmiplease',
  workers: someWorkers,
  reconcile: (w) => leaseReconciler(w.deps),
  sources({ caches }, enqueue) {
    enqueueOn(caches.leases, enqueue, (l) => [keyOf(l)], specOrMetaChanged);
    enqueueOn(caches.vmips, enqueue, (ip) => caches.leases.byIndex(LEASE_BY_VMIP, keyOf(ip)).map(keyOf), specOrMetaChanged);
  },
};
