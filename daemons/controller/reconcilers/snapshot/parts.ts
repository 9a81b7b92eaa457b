/**
 * What the snapshot reconcilers (VirtualDiskSnapshot, VirtualMachineSnapshot, Restore and Clone,
 * VirtualMachineSnapshotOperation) share, built once (`w.shared(snapshotParts)`): their caches and
 * dependencies. They run beside the storage reconcilers (they read disks' PVCs from the storage
 * caches); VolumeSnapshots are watched only when the cluster serves snapshot.storage.k8s.io/v1 (probed
 * once at start; without it every disk snapshot fails with that reason).
 */
import { volumeSnapshotDescriptor } from '../../../../shared/api/k8s/volume-snapshot.js';
import { NotFoundError } from '../../../../shared/errors/index.js';
import { conditionalMergePatch, objectKey, type KubeClient, type KubeObject, type ResourceClient } from '../../../../shared/kube/index.js';
import type { Logger } from '../../../../shared/log/index.js';
import { scopesOf } from '../../caches.js';
import type { Wiring } from '../../declaration.js';
import type { ObjectCache } from '../../engine/cache.js';
import { handlerChain, type ReconcileState, type ReconcilerSpec } from '../../engine/reconciler.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { storageParts } from '../provisioning/parts.js';
import { makeSnapshotClients, type SnapshotCaches, type SnapshotDeps } from './deps.js';
import { subresourceFilesystems } from './freeze.js';
import { VDS_BY_DISK } from './vdsnapshot/reconciler.js';
import { VMS_BY_VM } from './vmsnapshot/reconciler.js';
import { VMSOP_BY_SNAPSHOT } from './vmsop/reconciler.js';

export interface SnapshotParts {
  readonly deps: SnapshotDeps;
  /** The snapshot and storage caches: the snapshot reconcilers start once these sync. */
  readonly all: readonly ObjectCache<KubeObject>[];
}

export function snapshotParts(w: Wiring): SnapshotParts {
  const storage = w.shared(storageParts);
  const clients = makeSnapshotClients(w.kube);
  const { namespaced } = scopesOf(w.config);
  const caches: SnapshotCaches = {
    vdSnapshots: w.informer(clients.vdSnapshots, namespaced),
    vmSnapshots: w.informer(clients.vmSnapshots, namespaced),
    vmsops: w.informer(clients.vmsops, namespaced),
    volumeSnapshots: w.features.volumeSnapshots ? w.informer(clients.volumeSnapshots, namespaced) : undefined,
  };
  caches.vdSnapshots.addIndex(VDS_BY_DISK, (vds) => [objectKey({ namespace: vds.metadata.namespace, name: vds.spec.virtualDiskName })]);
  caches.vmsops.addIndex(VMSOP_BY_SNAPSHOT, (op) => [objectKey({ namespace: op.metadata.namespace, name: op.spec.virtualMachineSnapshotName })]);
  caches.vmSnapshots.addIndex(VMS_BY_VM, (vms) => [objectKey({ namespace: vms.metadata.namespace, name: vms.spec.virtualMachineName })]);
  const deps: SnapshotDeps = { ...storage.deps, snapshots: { clients, caches, filesystems: w.ports.filesystems ?? subresourceFilesystems(w.kube) } };
  const own = [caches.vdSnapshots, caches.vmSnapshots, caches.vmsops, caches.volumeSnapshots].filter((c) => c !== undefined);
  return { deps, all: [...storage.all, ...(own as unknown as ObjectCache<KubeObject>[])] };
}

/** The caches every snapshot reconciler waits for (its `caches` in the declaration). */
export const snapshotCachesAll = (w: Wiring): readonly ObjectCache<KubeObject>[] => w.shared(snapshotParts).all;

/** The snapshot informers, for the declarations' sources. */
export const snapshotCaches = (w: Wiring): SnapshotCaches => w.shared(snapshotParts).deps.snapshots.caches;

/**
 * A snapshot kind's handler chain: the object from its cache, and the status written as a merge patch
 * through /status, conditional on the version decided on (a stale decision is refused and made again).
 */
export function snapshotChain<O extends KubeObject & { status?: St | undefined }, St, S extends ReconcileState<O, St>>(
  cache: ObjectCache<O>,
  client: Pick<ResourceClient<O>, 'mergePatch'>,
  spec: Pick<ReconcilerSpec<O, St, S>, 'name' | 'init' | 'handlers'>,
): ReconcileFn {
  return handlerChain<O, St, S>({
    ...spec,
    load: (key) => cache.get(key),
    invalid: (key) => cache.invalid(key),
    statusOf: (o) => o.status,
    writeStatus: async (o, patch, signal) => {
      const body = conditionalMergePatch({ status: patch }, o.metadata.resourceVersion);
      cache.remember(await client.mergePatch({ namespace: o.metadata.namespace, name: o.metadata.name ?? '' }, body, { subresource: 'status', signal }));
    },
  });
}

/** The keys of `o`'s owners of `kind` (in `o`'s namespace). */
export const ownedBy = (o: KubeObject, kind: string): string[] =>
  (o.metadata.ownerReferences ?? []).filter((x) => x.kind === kind).map((x) => objectKey({ namespace: o.metadata.namespace, name: x.name }));

/** Whether the apiserver serves VolumeSnapshots (404: not, the disk snapshots fail saying so); any other answer counts as served, the informer retries. */
export async function volumeSnapshotsServed(kube: KubeClient, signal: AbortSignal, log: Logger): Promise<boolean> {
  try {
    await kube.rest.request({
      method: 'GET',
      path: `/apis/${volumeSnapshotDescriptor.group}/${volumeSnapshotDescriptor.version}`,
      signal,
      what: 'probe snapshot.storage.k8s.io/v1',
    });
    return true;
  } catch (err: unknown) {
    if (!(err instanceof NotFoundError)) return true;
    log.info('snapshot.storage.k8s.io/v1 is not served: disk snapshots will fail until a CSI snapshot controller is installed and the controller restarts');
    return false;
  }
}
