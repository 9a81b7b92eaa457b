/**
 * The VM subresources of the aggregated API `subresources.virtualization.deckhouse.io/v1alpha2`:
 * the plain calls (freeze, unfreeze, addvolume, removevolume) here, the streams in stream.ts.
 */
import type { Connection } from './connection.js';
import { UsageError } from './exit-codes.js';

export const SUBRESOURCES_GROUP_VERSION = 'subresources.virtualization.deckhouse.io/v1alpha2';

/** `/apis/subresources.virtualization.deckhouse.io/v1alpha2/namespaces/<ns>/virtualmachines/<vm>/<sub>`. */
export function subresourcePath(namespace: string, vm: string, sub: string): string {
  return `/apis/${SUBRESOURCES_GROUP_VERSION}/namespaces/${encodeURIComponent(namespace)}/virtualmachines/${encodeURIComponent(vm)}/${sub}`;
}

type Query = Record<string, string | number | boolean | undefined>;

async function put(conn: Connection, vm: string, sub: string, signal: AbortSignal, opts: { query?: Query; body?: unknown } = {}): Promise<void> {
  await conn.kube.rest.request({
    method: 'PUT',
    path: subresourcePath(conn.namespace, vm, sub),
    query: opts.query,
    body: opts.body,
    signal,
    what: `${sub} VirtualMachine ${conn.namespace}/${vm}`,
  });
}

/** Freeze the guest's filesystems (through the guest agent); the guest thaws itself after `unfreezeTimeout`. */
export function freeze(conn: Connection, vm: string, unfreezeTimeout: string, signal: AbortSignal): Promise<void> {
  return put(conn, vm, 'freeze', signal, { body: { unfreezeTimeout } });
}

export function unfreeze(conn: Connection, vm: string, signal: AbortSignal): Promise<void> {
  return put(conn, vm, 'unfreeze', signal);
}

export const VOLUME_KINDS = ['VirtualDisk', 'VirtualImage', 'ClusterVirtualImage'] as const;
export type VolumeKind = (typeof VOLUME_KINDS)[number];

export interface AddVolumeRequest {
  /** The volume's name in the VM (the disk or image name). */
  name: string;
  volumeKind: VolumeKind;
  pvcName?: string | undefined;
  image?: string | undefined;
  serial?: string | undefined;
  isCdrom: boolean;
}

/** Hot-plug a disk or image; the server builds KubeVirt's AddVolumeOptions from these query options. */
export async function addVolume(conn: Connection, vm: string, req: AddVolumeRequest, signal: AbortSignal): Promise<void> {
  if (!(VOLUME_KINDS as readonly string[]).includes(req.volumeKind)) {
    throw new UsageError(`--volume-kind must be one of ${VOLUME_KINDS.join(', ')}, not "${req.volumeKind}"`);
  }
  const query: Query = { name: req.name, volumeKind: req.volumeKind, pvcName: req.pvcName, image: req.image, serial: req.serial };
  if (req.isCdrom) query['isCdrom'] = true;
  await put(conn, vm, 'addvolume', signal, { query });
}

export function removeVolume(conn: Connection, vm: string, name: string, signal: AbortSignal): Promise<void> {
  return put(conn, vm, 'removevolume', signal, { query: { name } });
}

/** `virtualmachinepools/<pool>/scaledownwith`: delete the named members and lower the pool's replicas by their number. */
export async function scaleDownWith(conn: Connection, pool: string, targets: readonly string[], dryRun: boolean, signal: AbortSignal): Promise<void> {
  if (targets.length === 0) throw new UsageError('name at least one VirtualMachine of the pool to remove');
  await conn.kube.rest.request({
    method: 'POST',
    path: `/apis/${SUBRESOURCES_GROUP_VERSION}/namespaces/${encodeURIComponent(conn.namespace)}/virtualmachinepools/${encodeURIComponent(pool)}/scaledownwith`,
    body: { apiVersion: SUBRESOURCES_GROUP_VERSION, kind: 'VirtualMachinePoolScaleDownWith', targets, ...(dryRun ? { dryRun: ['All'] } : {}) },
    signal,
    what: `scaledownwith VirtualMachinePool ${conn.namespace}/${pool}`,
  });
}
