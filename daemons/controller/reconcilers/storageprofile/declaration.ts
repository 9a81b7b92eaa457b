import type { ReconcilerDeclaration } from '../../declaration.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn } from '../../sources.js';
import { storageParts } from '../provisioning/parts.js';
import { storageProfileReconciler } from './reconciler.js';

/** StorageProfile (key: the StorageClass name): every StorageClass and every profile, created, changed or deleted. */
export const storageProfileDeclaration: ReconcilerDeclaration = {
  name: 'storageprofile',
  workers: () => 1,
  enabled: (f) => f.storage,
  caches: (w) => w.shared(storageParts).all,
  reconcile: (w) => storageProfileReconciler(w.shared(storageParts).deps),
  sources(w, enqueue) {
    const { caches } = w.shared(storageParts).deps.storage;
    enqueueOn(caches.storageClasses, enqueue, (c) => [keyOf(c)]);
    enqueueOn(caches.storageProfiles, enqueue, (p) => [keyOf(p)]);
  },
};
