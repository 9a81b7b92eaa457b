/**
 * The storage reconcilers (vi, cvi, vd, vmbda) with their own caches (PVCs, StorageClasses, helper
 * Pods, attachments) and event sources, started and stopped with the rest of the controller.
 */
import type { KubeClient, KubeObject } from '../../../shared/kube/index.js';
import type { Logger } from '../../../shared/log/index.js';
import { informerCache, scopesOf } from '../caches.js';
import type { Caches, Deps } from '../deps.js';
import type { ObjectCache } from '../engine/cache.js';
import { keyOf } from '../engine/reconciler.js';
import type { ReconcileFn, Runner } from '../engine/runner.js';
import { enqueueOn, specOrMetaChanged } from '../sources.js';
import { cviReconciler } from './cvi/index.js';
import {
  HELPERS_BY_OWNER,
  metricsProgressReader,
  ownerKeyOfHelper,
  type ProgressReader,
  type StorageCaches,
  type StorageDeps,
} from './provisioning/helpers.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { HELPER_LABEL, METRICS_PORT, OWNER_ANNOTATION } from './provisioning/importer.js';
import { makeStorageClients } from './provisioning/kube.js';
import { vdReconciler } from './vd/index.js';
import { viReconciler } from './vi/index.js';
import { subresourceHotplug, type VolumeHotplug } from './vmbda/hotplug.js';
import { VMBDA_BY_DEVICE, VMBDA_BY_VM, vmbdaIndexes, vmbdaReconciler } from './vmbda/index.js';
import { deviceKey } from './vm/state.js';
import { objectKey } from '../../../shared/kube/index.js';

export interface StorageOptions {
  kube: KubeClient;
  signal: AbortSignal;
  logger: Logger;
  /** How attachments reach the hypervisor; the subresource API by default. */
  hotplug?: VolumeHotplug | undefined;
  /** How an importer's progress is read; its metrics endpoint by default. */
  progress?: ProgressReader | undefined;
}

export interface StorageReconcilers {
  readonly deps: StorageDeps;
  readonly caches: ObjectCache<KubeObject>[];
  readonly runners: { vi: Runner; cvi: Runner; vd: Runner; vmbda: Runner };
}

/** Makes a named runner of `workers` workers for a reconciler (the controller's, so its metrics and shutdown cover it). */
export type MakeRunner = (name: string, reconcile: ReconcileFn, workers: number) => Runner;

/** `caches` are the controller's informer caches (their events wake the storage reconcilers); `deps` as every reconciler gets them. */
export function storageReconcilers(deps: Deps, caches0: Caches, opts: StorageOptions, runner: MakeRunner): StorageReconcilers {
  const config = deps.config;
  const clients = makeStorageClients(opts.kube);
  const { namespaced } = scopesOf(config);
  const cache = <T extends KubeObject>(c: Parameters<typeof informerCache<T>>[0], scope: object): ObjectCache<T> =>
    informerCache(c, scope, opts.signal, opts.logger);
  const caches = {
    pvcs: cache(clients.pvcs, namespaced),
    storageClasses: cache(clients.storageClasses, {}),
    helperPods: cache(clients.helperPods, { ...namespaced, labelSelector: HELPER_LABEL }),
    vmbdas: cache(clients.vmbdas, namespaced),
  };
  caches.helperPods.addIndex(HELPERS_BY_OWNER, (p) => {
    const tag = p.metadata.annotations?.[OWNER_ANNOTATION];
    return tag === undefined ? [] : [tag];
  });
  for (const [name, fn] of Object.entries(vmbdaIndexes)) caches.vmbdas.addIndex(name, fn);
  const d: StorageDeps = {
    ...deps,
    storage: {
      clients,
      caches,
      settings: {
        image: config.IMPORTER_IMAGE,
        dvcrAddress: config.DVCR_ADDRESS,
        dvcrInsecure: config.DVCR_PLAIN_HTTP,
        uploadWaitTimeout: `${String(Math.round(config.UPLOAD_WAIT_TIMEOUT / 1000))}s`,
      },
      progress: opts.progress ?? metricsProgressReader(METRICS_PORT),
      hotplug: opts.hotplug ?? subresourceHotplug(opts.kube),
    },
  };
  const some = Math.max(1, Math.floor(config.RECONCILE_WORKERS / 2));
  const runners = {
    vi: runner('vi', viReconciler(d), some),
    cvi: runner('cvi', cviReconciler(d), some),
    vd: runner('vd', vdReconciler(d), some),
    vmbda: runner('vmbda', vmbdaReconciler(d), some),
  };
  wireStorageSources(caches0, caches, runners);
  return { deps: d, caches: Object.values(caches) as unknown as ObjectCache<KubeObject>[], runners };
}

const ns = (o: KubeObject): string => o.metadata.namespace ?? '';

function wireStorageSources(caches: Caches, sc: StorageCaches, r: StorageReconcilers['runners']): void {
  const self = (o: KubeObject): string[] => [keyOf(o)];
  const pending = (list: readonly { status?: { phase?: string } | undefined; metadata: KubeObject['metadata'] }[]): string[] =>
    list.filter((o) => o.status?.phase !== 'Ready').map((o) => keyOf(o as KubeObject));
  const phaseChanged = (a: { status?: { phase?: string } | undefined } & KubeObject, b: { status?: { phase?: string } | undefined } & KubeObject): boolean =>
    a.status?.phase !== b.status?.phase || specOrMetaChanged(a, b);
  const byKind: Record<string, Runner> = { VirtualImage: r.vi, ClusterVirtualImage: r.cvi, VirtualDisk: r.vd };

  // Each object itself (every change: someone else may write its status too).
  enqueueOn(caches.images, r.vi, self);
  enqueueOn(caches.clusterImages, r.cvi, self);
  enqueueOn(caches.disks, r.vd, self);
  enqueueOn(sc.vmbdas, r.vmbda, self);
  // Helper Pods and PVCs wake the object they work for.
  sc.helperPods.informer.on('add', (p) => wakeOwner(byKind, p));
  sc.helperPods.informer.on('update', (p) => wakeOwner(byKind, p));
  sc.helperPods.informer.on('delete', (p) => wakeOwner(byKind, p));
  enqueueOn(sc.pvcs, r.vd, (p) => ownersOf(p, 'VirtualDisk'));
  enqueueOn(sc.pvcs, r.vi, (p) => ownersOf(p, 'VirtualImage'));
  // A StorageClass appearing may unblock whatever waits for one.
  enqueueOn(sc.storageClasses, r.vd, () => pending(caches.disks.list()));
  enqueueOn(sc.storageClasses, r.vi, () => pending(caches.images.list()));
  // An image or disk reaching a phase may unblock objects copied from it.
  const dependents = (): void => {
    for (const k of pending(caches.disks.list())) r.vd.enqueue(k);
    for (const k of pending(caches.images.list())) r.vi.enqueue(k);
    for (const k of pending(caches.clusterImages.list())) r.cvi.enqueue(k);
  };
  for (const c of [caches.images, caches.clusterImages, caches.disks] as unknown as ObjectCache<KubeObject & { status?: { phase?: string } }>[]) {
    c.informer.on('update', (a, b) => {
      if (a.status?.phase !== b.status?.phase) dependents();
    });
  }
  // VMs: which disks and images are in use; attachments wait for their VM and its instance.
  const devicesOf = (vm: VirtualMachine): { kind: string; key: string }[] =>
    vm.spec.blockDeviceRefs.map((ref) => ({
      kind: ref.kind,
      key: ref.kind === 'ClusterVirtualImage' ? ref.name : objectKey({ namespace: vm.metadata.namespace, name: ref.name }),
    }));
  enqueueOn(caches.vms, r.vd, (vm) =>
    devicesOf(vm)
      .filter((x) => x.kind === 'VirtualDisk')
      .map((x) => x.key),
  );
  enqueueOn(
    caches.vms,
    r.vi,
    (vm) =>
      devicesOf(vm)
        .filter((x) => x.kind === 'VirtualImage')
        .map((x) => x.key),
    specOrMetaChanged,
  );
  enqueueOn(
    caches.vms,
    r.cvi,
    (vm) =>
      devicesOf(vm)
        .filter((x) => x.kind === 'ClusterVirtualImage')
        .map((x) => x.key),
    specOrMetaChanged,
  );
  enqueueOn(caches.vms, r.vmbda, (vm) => sc.vmbdas.byIndex(VMBDA_BY_VM, keyOf(vm)).map(keyOf), phaseChanged);
  enqueueOn(caches.kvvmis, r.vmbda, (vmi) => sc.vmbdas.byIndex(VMBDA_BY_VM, keyOf(vmi)).map(keyOf));
  enqueueOn(
    sc.vmbdas,
    r.vd,
    (a) => (a.spec.blockDeviceRef.kind === 'VirtualDisk' ? [objectKey({ namespace: a.metadata.namespace, name: a.spec.blockDeviceRef.name })] : []),
    phaseChanged,
  );
  // Attachments wait for their device; one attachment's end frees the device for another.
  enqueueOn(caches.disks, r.vmbda, (o) => sc.vmbdas.byIndex(VMBDA_BY_DEVICE, deviceKey('VirtualDisk', ns(o), o.metadata.name ?? '')).map(keyOf), phaseChanged);
  enqueueOn(
    caches.images,
    r.vmbda,
    (o) => sc.vmbdas.byIndex(VMBDA_BY_DEVICE, deviceKey('VirtualImage', ns(o), o.metadata.name ?? '')).map(keyOf),
    phaseChanged,
  );
  enqueueOn(
    caches.clusterImages,
    r.vmbda,
    (o) => sc.vmbdas.byIndex(VMBDA_BY_DEVICE, deviceKey('ClusterVirtualImage', undefined, o.metadata.name ?? '')).map(keyOf),
    phaseChanged,
  );
  enqueueOn(
    sc.vmbdas,
    r.vmbda,
    (a) => sc.vmbdas.byIndex(VMBDA_BY_DEVICE, deviceKey(a.spec.blockDeviceRef.kind, ns(a), a.spec.blockDeviceRef.name)).map(keyOf),
    specOrMetaChanged,
  );
}

function wakeOwner(byKind: Record<string, Runner>, pod: KubeObject): void {
  const owner = ownerKeyOfHelper(pod);
  if (owner !== undefined) byKind[owner.kind]?.enqueue(owner.key);
}

function ownersOf(obj: KubeObject, kind: string): string[] {
  return (obj.metadata.ownerReferences ?? []).filter((o) => o.kind === kind).map((o) => objectKey({ namespace: obj.metadata.namespace, name: o.name }));
}
