import { objectKey } from '../../../../shared/kube/index.js';
import { someWorkers, type ReconcilerDeclaration } from '../../declaration.js';
import { enqueueOn } from '../../sources.js';
import { devicesOf, phaseChanged, provisionedSources, storageParts } from '../provisioning/parts.js';
import { vdReconciler } from './index.js';

/** VirtualDisk (key: namespace/name): itself, its helpers and PVCs, StorageClasses, its source's phase, VMs and attachments using it. */
export const vdDeclaration: ReconcilerDeclaration = {
  name: 'vd',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches: (w) => w.shared(storageParts).all,
  reconcile: (w) => vdReconciler(w.shared(storageParts).deps),
  sources(w, enqueue) {
    provisionedSources(w, 'VirtualDisk', w.caches.disks, enqueue);
    enqueueOn(w.caches.vms, enqueue, (vm) => devicesOf(vm, 'VirtualDisk'));
    enqueueOn(
      w.shared(storageParts).deps.storage.caches.vmbdas,
      enqueue,
      (a) => (a.spec.blockDeviceRef.kind === 'VirtualDisk' ? [objectKey({ namespace: a.metadata.namespace, name: a.spec.blockDeviceRef.name })] : []),
      phaseChanged,
    );
  },
};
