/**
 * ClusterVirtualImage: always DVCR (`cvi/<name>:<uid>`). Its helper Pods run in the controller's
 * namespace (POD_NAMESPACE), or in the namespace of a namespaced source (a VirtualImage or VirtualDisk
 * on a PVC, a pull Secret).
 */
import { Finalizer } from '../../../../shared/api/finalizers.js';
import type { ClusterVirtualImage } from '../../../../shared/api/resources/virtualimage.js';
import type { ReconcileFn } from '../../engine/runner.js';
import type { StorageDeps } from '../provisioning/helpers.js';
import { imageReconciler } from '../provisioning/image-reconciler.js';

export function cviReconciler(d: StorageDeps): ReconcileFn {
  return imageReconciler<ClusterVirtualImage>(d, {
    kind: 'ClusterVirtualImage',
    name: 'cvi',
    finalizer: Finalizer.cviCleanup,
    cache: (deps) => deps.caches.clusterImages,
    client: (deps) => deps.clients.clusterImages,
    repo: (img) => `cvi/${img.metadata.name ?? ''}:${img.metadata.uid ?? ''}`,
    helperNamespace: (deps) => deps.config.POD_NAMESPACE,
    pvcStorage: () => undefined,
    namespaceOf: () => undefined,
  });
}
