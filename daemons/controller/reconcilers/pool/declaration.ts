import { POOL_LABELS } from '../../../../shared/api/resources/vmpool.js';
import { controllerRefOf, objectKey, type KubeObject } from '../../../../shared/kube/index.js';
import type { ReconcilerDeclaration } from '../../declaration.js';
import type { ObjectCache } from '../../engine/cache.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn, specOrMetaChanged, statusChanged } from '../../sources.js';
import { poolReconciler } from './index.js';
import { poolParts } from './parts.js';

/** The pool a member VM or a pool-made disk belongs to (its controller, else its pool label). */
function poolKeyOf(obj: KubeObject): string[] {
  const ref = controllerRefOf(obj);
  const name = ref?.kind === 'VirtualMachinePool' ? ref.name : obj.metadata.labels?.[POOL_LABELS.pool];
  return name === undefined ? [] : [objectKey({ namespace: obj.metadata.namespace, name })];
}

/** VirtualMachinePool (key: namespace/name): itself, its members' changes, its disks' changes. */
export const poolDeclaration: ReconcilerDeclaration = {
  name: 'vmpool',
  workers: () => 2,
  caches: (w) => [w.shared(poolParts).pools as unknown as ObjectCache<KubeObject>],
  reconcile: (w) => {
    const { pools, client } = w.shared(poolParts);
    return poolReconciler(w.deps, { pools, poolClient: client });
  },
  sources(w, enqueue) {
    const { pools } = w.shared(poolParts);
    enqueueOn(pools, enqueue, (p) => [keyOf(p)], specOrMetaChanged);
    enqueueOn(w.caches.vms, enqueue, poolKeyOf, (a, b) => specOrMetaChanged(a, b) || statusChanged(a, b));
    enqueueOn(w.caches.disks, enqueue, poolKeyOf, (a, b) => specOrMetaChanged(a, b) || a.status?.phase !== b.status?.phase);
  },
};
