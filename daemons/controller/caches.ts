import { Informer, type KubeObject, type ResourceClient } from '../../shared/kube/index.js';
import { childLogger, type Logger } from '../../shared/log/index.js';
import type { ControllerConfig } from './config.js';
import type { Caches } from './deps.js';
import { ObjectCache } from './engine/cache.js';
import type { Clients } from './kube/resources.js';
import { LEASE_BY_VMIP } from './reconcilers/ipam/vmip.js';
import { VMOP_BY_VM } from './reconcilers/vmop/index.js';
import { VMIP_BY_OWNER, ownerVMKeys } from './reconcilers/vm/handlers/ipam.js';
import { vmIndexes } from './reconcilers/vm/state.js';

/**
 * Every object is delivered again this often (an update of itself), so a missed event is healed:
 * controller-runtime's default sync period, 10 h, spread by up to 10 % per informer so they do not
 * all resync at once.
 */
export const RESYNC_PERIOD_MS = 10 * 60 * 60 * 1000;

interface Scope {
  namespace?: string;
  labelSelector?: string;
}

/**
 * One informer-backed cache per resource. Namespaced resources follow WATCH_NAMESPACE; classes,
 * cluster images and nodes follow CLUSTER_OBJECTS_SELECTOR; leases are always watched cluster-wide
 * (every taken address matters to allocation).
 */
export function makeCaches(clients: Clients, config: ControllerConfig, signal: AbortSignal, logger: Logger): Caches {
  const namespaced: Scope = config.WATCH_NAMESPACE !== undefined ? { namespace: config.WATCH_NAMESPACE } : {};
  const clusterScoped: Scope = config.CLUSTER_OBJECTS_SELECTOR !== undefined ? { labelSelector: config.CLUSTER_OBJECTS_SELECTOR } : {};
  const cache = <T extends KubeObject>(client: ResourceClient<T>, scope: Scope): ObjectCache<T> =>
    new ObjectCache(
      new Informer<T>({
        client,
        ...scope,
        signal,
        backoff: { initialMs: 200, maxMs: 10_000, jitter: 0.2 },
        resyncMs: Math.round(RESYNC_PERIOD_MS * (1 + 0.1 * Math.random())),
        logger: childLogger({ component: 'informer', resource: client.descriptor.kind }, logger),
      }),
    );
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
    nodes: cache(clients.nodes, clusterScoped),
  };
  for (const [name, fn] of Object.entries(vmIndexes)) caches.vms.addIndex(name, fn);
  caches.vmips.addIndex(VMIP_BY_OWNER, ownerVMKeys);
  caches.vmops.addIndex(VMOP_BY_VM, (op) => [`${op.metadata.namespace ?? ''}/${op.spec.virtualMachineName}`]);
  caches.leases.addIndex(LEASE_BY_VMIP, (lease) => {
    const ref = lease.spec.virtualMachineIPAddressRef;
    return ref === undefined || ref.name === '' ? [] : [`${ref.namespace}/${ref.name}`];
  });
  return caches;
}

/** Every cache, for starting, syncing and stopping them together. */
export function allCaches(caches: Caches): ObjectCache<KubeObject>[] {
  return Object.values(caches) as ObjectCache<KubeObject>[];
}
