import { someWorkers, type ReconcilerDeclaration } from '../../declaration.js';
import { enqueueOn, specOrMetaChanged } from '../../sources.js';
import { devicesOf, provisionedSources, storageParts } from '../provisioning/parts.js';
import { viReconciler } from './index.js';

/** VirtualImage (key: namespace/name): itself, its helpers and PVCs, StorageClasses, its sources' phase, the VMs using it. */
export const viDeclaration: ReconcilerDeclaration = {
  name: 'vi',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches: (w) => w.shared(storageParts).all,
  reconcile: (w) => viReconciler(w.shared(storageParts).deps),
  sources(w, enqueue) {
    provisionedSources(w, 'VirtualImage', w.caches.images, enqueue);
    enqueueOn(w.caches.vms, enqueue, (vm) => devicesOf(vm, 'VirtualImage'), specOrMetaChanged);
  },
};
