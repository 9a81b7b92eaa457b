/**
 * What the pool reconciler needs beyond the core caches: the pools' own informer and client, and
 * indexes of the VMs and disks that carry a pool's uid label (members and pool-made disks).
 */
import { VirtualMachinePoolSchema, POOL_LABELS, virtualMachinePool, type VirtualMachinePool } from '../../../../shared/api/resources/vmpool.js';
import { descriptorOf, type ResourceClient } from '../../../../shared/kube/index.js';
import { scopesOf } from '../../caches.js';
import type { Wiring } from '../../declaration.js';
import type { CachePort } from '../../deps.js';
import type { ObjectCache } from '../../engine/cache.js';
import { FIELD_MANAGER } from '../../kube/resources.js';

/** Index of VMs and disks by the value of their pool-uid label. */
export const BY_POOL_UID = 'byPoolUid';

export interface PoolParts {
  readonly pools: ObjectCache<VirtualMachinePool>;
  readonly client: ResourceClient<VirtualMachinePool>;
}

/** The ports the pool handlers use (the daemon's caches and clients satisfy them; unit tests give in-memory kinds). */
export interface PoolDeps {
  readonly pools: CachePort<VirtualMachinePool>;
  readonly poolClient: Pick<ResourceClient<VirtualMachinePool>, 'patchStatus'>;
}

const poolUidOf = (obj: { metadata: { labels?: Record<string, string> | undefined } }): string[] => {
  const uid = obj.metadata.labels?.[POOL_LABELS.poolUID];
  return uid === undefined ? [] : [uid];
};

export function poolParts(w: Wiring): PoolParts {
  const client = w.kube.resource(descriptorOf(virtualMachinePool), VirtualMachinePoolSchema, FIELD_MANAGER);
  const pools = w.informer(client, scopesOf(w.config).namespaced);
  w.caches.vms.addIndex(BY_POOL_UID, poolUidOf);
  w.caches.disks.addIndex(BY_POOL_UID, poolUidOf);
  return { pools, client };
}
