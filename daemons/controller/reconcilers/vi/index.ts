/** VirtualImage: DVCR (`vi/<ns>/<name>:<uid>`) or, for storage PersistentVolumeClaim, DVCR then a PVC. */
import { Finalizer } from '../../../../shared/api/finalizers.js';
import type { VirtualImage } from '../../../../shared/api/resources/virtualimage.js';
import type { ReconcileFn } from '../../engine/runner.js';
import type { StorageDeps } from '../provisioning/helpers.js';
import { imageReconciler } from '../provisioning/image-reconciler.js';
import { objectKey } from '../../../../shared/kube/index.js';

export function viReconciler(d: StorageDeps): ReconcileFn {
  return imageReconciler<VirtualImage>(d, {
    kind: 'VirtualImage',
    name: 'vi',
    finalizer: Finalizer.viCleanup,
    cache: (deps) => deps.caches.images,
    client: (deps) => deps.clients.images,
    repo: (img) => `vi/${objectKey(img.metadata)}:${img.metadata.uid ?? ''}`,
    helperNamespace: (_deps, img) => img.metadata.namespace ?? '',
    pvcStorage: (img) => (img.spec.storage === 'ContainerRegistry' ? undefined : { storageClassName: img.spec.persistentVolumeClaim?.storageClassName }),
    namespaceOf: (img) => img.metadata.namespace,
  });
}
