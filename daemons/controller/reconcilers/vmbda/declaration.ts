import type { KubeObject } from '../../../../shared/kube/index.js';
import { someWorkers, type ReconcilerDeclaration } from '../../declaration.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn, specOrMetaChanged } from '../../sources.js';
import { phaseChanged, storageParts } from '../provisioning/parts.js';
import { deviceKey } from '../vm/state.js';
import { VMBDA_BY_DEVICE, VMBDA_BY_VM, vmbdaReconciler } from './index.js';

/** VirtualMachineBlockDeviceAttachment (key: namespace/name): itself, its VM and instance, its device, the attachments sharing the device. */
export const vmbdaDeclaration: ReconcilerDeclaration = {
  name: 'vmbda',
  workers: someWorkers,
  enabled: (f) => f.storage,
  caches: (w) => w.shared(storageParts).all,
  reconcile: (w) => vmbdaReconciler(w.shared(storageParts).deps),
  sources(w, enqueue) {
    const { caches } = w;
    const vmbdas = w.shared(storageParts).deps.storage.caches.vmbdas;
    const onDevice = (kind: string, o: KubeObject): string[] =>
      vmbdas.byIndex(VMBDA_BY_DEVICE, deviceKey(kind, o.metadata.namespace, o.metadata.name ?? '')).map(keyOf);
    enqueueOn(vmbdas, enqueue, (a) => [keyOf(a)]);
    // Attachments wait for their VM and its instance.
    enqueueOn(caches.vms, enqueue, (vm) => vmbdas.byIndex(VMBDA_BY_VM, keyOf(vm)).map(keyOf), phaseChanged);
    enqueueOn(caches.kvvmis, enqueue, (vmi) => vmbdas.byIndex(VMBDA_BY_VM, keyOf(vmi)).map(keyOf));
    // Attachments wait for their device; one attachment's end frees the device for another.
    enqueueOn(caches.disks, enqueue, (o) => onDevice('VirtualDisk', o), phaseChanged);
    enqueueOn(caches.images, enqueue, (o) => onDevice('VirtualImage', o), phaseChanged);
    enqueueOn(caches.clusterImages, enqueue, (o) => onDevice('ClusterVirtualImage', o), phaseChanged);
    enqueueOn(
      vmbdas,
      enqueue,
      (a) => vmbdas.byIndex(VMBDA_BY_DEVICE, deviceKey(a.spec.blockDeviceRef.kind, a.metadata.namespace, a.spec.blockDeviceRef.name)).map(keyOf),
      specOrMetaChanged,
    );
  },
};
