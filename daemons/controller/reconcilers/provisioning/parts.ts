/**
 * What the storage reconcilers (vi, cvi, vd, vmbda) share, built once (`w.shared(storageParts)`):
 * their caches (PVCs, StorageClasses, helper Pods, attachments), clients and settings; and the event
 * sources they have in common (helper Pods, PVCs, StorageClasses, a dependency's phase, VMs' devices).
 */
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import { objectKey, type KubeObject } from '../../../../shared/kube/index.js';
import { scopesOf } from '../../caches.js';
import type { Wiring } from '../../declaration.js';
import type { ObjectCache } from '../../engine/cache.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn, specOrMetaChanged, type UpdateFilter } from '../../sources.js';
import { subresourceHotplug } from '../vmbda/hotplug.js';
import { vmbdaIndexes } from '../vmbda/index.js';
import { HELPERS_BY_OWNER, metricsProgressReader, ownerKeyOfHelper, type StorageDeps } from './helpers.js';
import { HELPER_LABEL, METRICS_PORT, OWNER_ANNOTATION } from './importer.js';
import { makeStorageClients } from './kube.js';
import type { Secret } from '../../kube/resources.js';
import { dvcrGcPort, dvcrGcSecretScope } from './postpone.js';

export interface StorageParts {
  readonly deps: StorageDeps;
  /** The storage caches: the storage reconcilers start once these (and the core ones) sync. */
  readonly all: readonly ObjectCache<KubeObject>[];
  /** The DVCR garbage collection Secret (the dvcr-gc reconciler's own object). */
  readonly gcSecrets: ObjectCache<Secret>;
}

export function storageParts(w: Wiring): StorageParts {
  const { config } = w;
  const clients = makeStorageClients(w.kube);
  const { namespaced } = scopesOf(config);
  const caches = {
    pvcs: w.informer(clients.pvcs, namespaced),
    storageClasses: w.informer(clients.storageClasses, {}),
    storageProfiles: w.informer(clients.storageProfiles, {}),
    helperPods: w.informer(clients.helperPods, { ...namespaced, labelSelector: HELPER_LABEL }),
    vmbdas: w.informer(clients.vmbdas, namespaced),
  };
  caches.helperPods.addIndex(HELPERS_BY_OWNER, (p) => {
    const tag = p.metadata.annotations?.[OWNER_ANNOTATION];
    return tag === undefined ? [] : [tag];
  });
  for (const [name, fn] of Object.entries(vmbdaIndexes)) caches.vmbdas.addIndex(name, fn);
  // The DVCR garbage collection run (one Secret in the module's namespace): imports wait while it holds them.
  const gcSecrets = w.informer(w.clients.secrets, dvcrGcSecretScope(config.POD_NAMESPACE));
  const deps: StorageDeps = {
    ...w.deps,
    storage: {
      clients,
      caches,
      settings: {
        image: config.IMPORTER_IMAGE,
        dvcrAddress: config.DVCR_ADDRESS,
        dvcrInsecure: config.DVCR_PLAIN_HTTP,
        uploadWaitTimeout: `${String(Math.round(config.UPLOAD_WAIT_TIMEOUT / 1000))}s`,
      },
      progress: w.ports.progress ?? metricsProgressReader(METRICS_PORT),
      hotplug: w.ports.hotplug ?? subresourceHotplug(w.kube),
      dvcrGc: dvcrGcPort(gcSecrets, config.POD_NAMESPACE),
    },
  };
  return { deps, gcSecrets, all: [...Object.values(caches), gcSecrets] as unknown as ObjectCache<KubeObject>[] };
}

type Phased = KubeObject & { status?: { phase?: string } | undefined };

/** The phase, spec or metadata changed. */
export const phaseChanged: UpdateFilter<Phased> = (a, b) => a.status?.phase !== b.status?.phase || specOrMetaChanged(a, b);

/** The keys of the objects not Ready yet. */
export function pending(list: readonly Phased[]): string[] {
  return list.filter((o) => o.status?.phase !== 'Ready').map(keyOf);
}

/**
 * The sources every provisioned kind (`kind`, its cache `own`) has: itself, its helper Pods and PVCs,
 * a StorageClass appearing (it may unblock whatever waits for one), and any image or disk reaching
 * a phase (objects copied from it may go on).
 */
export function provisionedSources<T extends Phased>(w: Wiring, kind: string, own: ObjectCache<T>, enqueue: (key: string) => void): void {
  const sc = w.shared(storageParts).deps.storage.caches;
  enqueueOn(own, enqueue, (o) => [keyOf(o)]);
  const wake = (pod: KubeObject): void => {
    const owner = ownerKeyOfHelper(pod);
    if (owner?.kind === kind) enqueue(owner.key);
  };
  for (const ev of ['add', 'update', 'delete'] as const) sc.helperPods.informer.on(ev, wake);
  if (kind !== 'ClusterVirtualImage') {
    enqueueOn(sc.pvcs, enqueue, (p) =>
      (p.metadata.ownerReferences ?? []).filter((o) => o.kind === kind).map((o) => objectKey({ namespace: p.metadata.namespace, name: o.name })),
    );
    enqueueOn(sc.storageClasses, enqueue, () => pending(own.list()));
    // A profile made or edited may unblock (or block) the claims not made yet.
    enqueueOn(sc.storageProfiles, enqueue, () => pending(own.list()));
  }
  for (const c of [w.caches.images, w.caches.clusterImages, w.caches.disks] as unknown as ObjectCache<Phased>[]) {
    c.informer.on('update', (a, b) => {
      if (a.status?.phase !== b.status?.phase) for (const k of pending(own.list())) enqueue(k);
    });
  }
}

/** The keys of the devices of `kind` a VM uses (cluster images by name). */
export function devicesOf(vm: VirtualMachine, kind: string): string[] {
  return vm.spec.blockDeviceRefs
    .filter((ref) => ref.kind === kind)
    .map((ref) => (kind === 'ClusterVirtualImage' ? ref.name : objectKey({ namespace: vm.metadata.namespace, name: ref.name })));
}
