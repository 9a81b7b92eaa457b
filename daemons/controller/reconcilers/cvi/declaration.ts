import { someWorkers, type ReconcilerDeclaration } from '../../declaration.js';
import { enqueueOn, specOrMetaChanged } from '../../sources.js';
import { devicesOf, provisionedSources, storageParts } from '../provisioning/parts.js';
import { cviReconciler } from './index.js';

/** ClusterVirtualImage (key: its name): itself, its helpers, its sources' phase, the VMs using it. */
export const cviDeclaration: ReconcilerDeclaration = {
  name: 'cvi',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches: (w) => w.shared(storageParts).all,
  reconcile: (w) => cviReconciler(w.shared(storageParts).deps),
  sources(w, enqueue) {
    provisionedSources(w, 'ClusterVirtualImage', w.caches.clusterImages, enqueue);
    enqueueOn(w.caches.vms, enqueue, (vm) => devicesOf(vm, 'ClusterVirtualImage'), specOrMetaChanged);
  },
};
