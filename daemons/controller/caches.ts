import { Informer, withoutManagedFields, type KubeObject, type ResourceClient, objectKey } from '../../shared/kube/index.js';
import { childLogger, type Logger } from '../../shared/log/index.js';
import type { ControllerConfig } from './config.js';
import type { Caches } from './deps.js';
import { ObjectCache } from './engine/cache.js';
import { launcherPodView, nodeView, type Clients } from './kube/resources.js';
import { LEASE_BY_VMIP } from './reconcilers/ipam/vmip/reconciler.js';
import { VMOP_BY_VM } from './reconcilers/vmop/index.js';
import { VMIP_BY_OWNER, ownerVMKeys } from './reconcilers/vm/handlers/ipam.js';
import { POD_BY_VM, podVMKeys, vmIndexes } from './reconcilers/vm/state.js';
import { launcherSelector } from '../../shared/api/internal/launcher.js';

/**
 * Every object is delivered again this often (an update of itself), so a missed event is healed:
 * controller-runtime's default sync period, 10 h, spread by up to 10 % per informer so they do not
 * all resync at once.
 */
export const RESYNC_PERIOD_MS = 10 * 60 * 60 * 1000;

export interface Scope {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/**
 * One informer-backed cache of a resource in a scope (backoff and resync as every cache here). The
 * store keeps what `transform` leaves of each object: by default all but `managedFields`, which no
 * reconciler reads (nodes and launcher pods keep less: `nodeView`, `launcherPodView`). Writes go out
 * as patches of named fields, never as a cached object sent back whole, so a trimmed copy never loses
 * a field on the server.
 */
export function informerCache<T extends KubeObject>(
  client: ResourceClient<T>,
  scope: Scope,
  signal: AbortSignal,
  logger: Logger,
  transform: (obj: T) => T = withoutManagedFields,
): ObjectCache<T> {
  return new ObjectCache(
    new Informer<T>({
      client,
      ...scope,
      signal,
      transform,
      backoff: { initialMs: 200, maxMs: 10_000, jitter: 0.2 },
      resyncMs: Math.round(RESYNC_PERIOD_MS * (1 + 0.1 * Math.random())),
      logger: childLogger({ component: 'informer', resource: client.descriptor.kind }, logger),
    }),
  );
}

/** The scopes of namespaced and cluster objects the config asks for (WATCH_NAMESPACE, CLUSTER_OBJECTS_SELECTOR). */
export function scopesOf(config: ControllerConfig): { namespaced: Scope; clusterScoped: Scope } {
  return {
    namespaced: config.WATCH_NAMESPACE !== undefined ? { namespace: config.WATCH_NAMESPACE } : {},
    clusterScoped: config.CLUSTER_OBJECTS_SELECTOR !== undefined ? { labelSelector: config.CLUSTER_OBJECTS_SELECTOR } : {},
  };
}

/**
 * One informer-backed cache per resource. Namespaced resources follow WATCH_NAMESPACE; classes,
 * cluster images and nodes follow CLUSTER_OBJECTS_SELECTOR; leases are always watched cluster-wide
 * (every taken address matters to allocation).
 */
export function makeCaches(clients: Clients, config: ControllerConfig, signal: AbortSignal, logger: Logger): Caches {
  const { namespaced, clusterScoped } = scopesOf(config);
  const cache = <T extends KubeObject>(client: ResourceClient<T>, scope: Scope, transform?: (obj: T) => T): ObjectCache<T> =>
    informerCache(client, scope, signal, logger, transform);
  const caches: Caches = {
    vms: cache(clients.vms, namespaced),
    classes: cache(clients.classes, clusterScoped),
    disks: cache(clients.disks, namespaced),
    images: cache(clients.images, namespaced),
    clusterImages: cache(clients.clusterImages, clusterScoped),
    kvvms: cache(clients.kvvms, namespaced),
    kvvmis: cache(clients.kvvmis, namespaced),
    migrations: cache(clients.migrations, namespaced),
    vmops: cache(clients.vmops, namespaced),
    vmips: cache(clients.vmips, namespaced),
    leases: cache(clients.leases, {}),
    nodes: cache(clients.nodes, clusterScoped, nodeView),
    pods: cache(clients.pods, { ...namespaced, labelSelector: launcherSelector() }, launcherPodView),
  };
  addIndexes(caches);
  return caches;
}

/** The secondary indexes the reconcilers read; added before the caches start (unit tests add them too). */
export function addIndexes(caches: Caches): void {
  for (const [name, fn] of Object.entries(vmIndexes)) caches.vms.addIndex(name, fn);
  caches.vmips.addIndex(VMIP_BY_OWNER, ownerVMKeys);
  caches.pods.addIndex(POD_BY_VM, podVMKeys);
  caches.vmops.addIndex(VMOP_BY_VM, (op) => [objectKey({ namespace: op.metadata.namespace, name: op.spec.virtualMachineName })]);
  caches.leases.addIndex(LEASE_BY_VMIP, (lease) => {
    const ref = lease.spec.virtualMachineIPAddressRef;
    return ref === undefined || ref.name === '' ? [] : [objectKey(ref)];
  });
}

/** Every cache, for starting, syncing and stopping them together. */
export function allCaches(caches: Caches): ObjectCache<KubeObject>[] {
  return Object.values(caches) as ObjectCache<KubeObject>[];
}
