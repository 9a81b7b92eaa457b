import { objectKey } from '../../../../shared/kube/index.js';
import { someWorkers, type ReconcilerDeclaration } from '../../declaration.js';
import type { ObjectCache } from '../../engine/cache.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn } from '../../sources.js';
import { ownerKeyOfHelper } from '../provisioning/helpers.js';
import type { PVC } from '../provisioning/kube.js';
import { storageParts } from '../provisioning/parts.js';
import { STRATEGY_ANNOTATION, DONE_ANNOTATION, primeName } from './annotations.js';
import { populatorReconciler } from './reconciler.js';

const populating = (p: PVC): boolean => (p.metadata.annotations?.[STRATEGY_ANNOTATION] ?? '') !== '';
const unfinished = (pvcs: ObjectCache<PVC>): string[] =>
  pvcs
    .list()
    .filter((p) => populating(p) && p.metadata.annotations?.[DONE_ANNOTATION] !== 'true')
    .map(keyOf);

/** PersistentVolumeClaims to populate (key: namespace/name): the claims, their helper Pods, and any image or disk going away. */
export const populatorDeclaration: ReconcilerDeclaration = {
  name: 'populator',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches: (w) => w.shared(storageParts).all,
  reconcile: (w) => populatorReconciler(w.shared(storageParts).deps, w.deps.events),
  sources(w, enqueue) {
    const { caches } = w.shared(storageParts).deps.storage;
    // A claim being populated, and the target of a prime claim (its owner) when the prime changes.
    enqueueOn(caches.pvcs, enqueue, (p) =>
      populating(p)
        ? [keyOf(p)]
        : (p.metadata.ownerReferences ?? [])
            .filter((o) => o.kind === 'PersistentVolumeClaim' && primeName(o.name) === p.metadata.name)
            .map((o) => objectKey({ namespace: p.metadata.namespace, name: o.name })),
    );
    const wake = (pod: Parameters<typeof ownerKeyOfHelper>[0]): void => {
      const owner = ownerKeyOfHelper(pod);
      if (owner?.kind === 'PersistentVolumeClaim') enqueue(owner.key);
    };
    for (const ev of ['add', 'update', 'delete'] as const) caches.helperPods.informer.on(ev, wake);
    for (const c of [w.caches.images, w.caches.clusterImages, w.caches.disks] as const) {
      c.informer.on('delete', () => {
        for (const k of unfinished(caches.pvcs)) enqueue(k);
      });
    }
  },
};
