import type { KubeObject } from '../../../../shared/kube/index.js';
import type { ObjectCache } from '../../engine/cache.js';
import type { ReconcilerDeclaration } from '../../declaration.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn } from '../../sources.js';
import { kubeVirtConfigParts } from './parts.js';
import { kubeVirtConfigReconciler } from './reconciler.js';

/** KubeVirt's configuration object `config` (key: namespace/name): the install reconcile of its required parts. */
export const kubeVirtConfigDeclaration: ReconcilerDeclaration = {
  name: 'kubevirt-config',
  workers: () => 1,
  enabled: (f) => f.kubevirtConfig,
  caches: (w) => [w.shared(kubeVirtConfigParts).cache as unknown as ObjectCache<KubeObject>],
  reconcile: (w) => {
    const { client, cache } = w.shared(kubeVirtConfigParts);
    return kubeVirtConfigReconciler({ client, cache, repair: w.config.KUBEVIRT_CONFIG_REPAIR, logger: w.log });
  },
  sources(w, enqueue) {
    enqueueOn(w.shared(kubeVirtConfigParts).cache, enqueue, (kv) => [keyOf(kv)]);
  },
};
