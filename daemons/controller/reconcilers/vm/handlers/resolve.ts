import type { VirtualDisk } from '../../../../../shared/api/resources/virtualdisk.js';
import type { ClusterVirtualImage, VirtualImage } from '../../../../../shared/api/resources/virtualimage.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import type { Deps } from '../../../deps.js';
import type { ResolvedDevice } from '../kvvm/devices.js';
import { migrationTargetOf } from '../../vd/migration.js';

export type BlockDeviceRef = VirtualMachine['spec']['blockDeviceRefs'][number];

/** A device resolved, or why it cannot be used yet. */
export type Resolution = { ok: true; device: ResolvedDevice } | { ok: false; problem: string; size?: string | undefined };

/** Disks are usable once Ready, while waiting for their first consumer (the VM binds them), or while they migrate to another class. */
const USABLE_DISK_PHASES = new Set(['Ready', 'WaitForFirstConsumer', 'Migrating']);

/**
 * Resolve one blockDeviceRef of the VM from the caches. A disk moving to another class is given on its
 * target claim once that can take the data, unless the instance is busy migrating other volumes:
 * KubeVirt takes one volume change at a time, so this one waits for the next.
 */
export function resolveDevice(deps: Deps, vm: VirtualMachine, ref: BlockDeviceRef): Resolution {
  const ns = vm.metadata.namespace ?? '';
  const resolved = resolveDeviceIn(deps, ns, ref);
  if (!resolved.ok || ref.kind !== 'VirtualDisk' || !('pvc' in resolved.device.source)) return resolved;
  const moving = migrationTargetOf(deps.caches.disks.get(`${ns}/${ref.name}`)?.status);
  if (moving === undefined) return resolved;
  const pending = deps.caches.kvvmis.get(`${ns}/${vm.metadata.name ?? ''}`)?.status?.migratedVolumes ?? [];
  if (pending.length > 0 && !pending.some((m) => m.destinationPVCInfo?.claimName === moving.target)) return resolved;
  return { ok: true, device: { ...resolved.device, source: { pvc: moving.target, readOnly: false, migratingFrom: moving.source } } };
}

/** Resolve a device named in a namespace (a VM's, or an attachment's: VirtualMachineBlockDeviceAttachment). */
export function resolveDeviceIn(deps: Pick<Deps, 'caches'>, ns: string, ref: Pick<BlockDeviceRef, 'kind' | 'name' | 'bootOrder'>): Resolution {
  switch (ref.kind) {
    case 'VirtualDisk':
      return resolveDisk(deps.caches.disks.get(`${ns}/${ref.name}`), ref);
    case 'VirtualImage':
      return resolveImage(deps.caches.images.get(`${ns}/${ref.name}`), ref);
    case 'ClusterVirtualImage':
      return resolveImage(deps.caches.clusterImages.get(ref.name), ref);
  }
}

function resolveDisk(vd: VirtualDisk | undefined, ref: Pick<BlockDeviceRef, 'name' | 'bootOrder'>): Resolution {
  if (vd === undefined) return { ok: false, problem: `VirtualDisk ${ref.name} not found` };
  const phase = vd.status?.phase;
  const current = vd.status?.target?.persistentVolumeClaimName;
  const size = vd.status?.capacity;
  if (phase === undefined || !USABLE_DISK_PHASES.has(phase) || current === undefined) {
    return { ok: false, problem: `VirtualDisk ${ref.name} is not ready (phase ${phase ?? 'unknown'})`, size };
  }
  return {
    ok: true,
    device: {
      kind: 'VirtualDisk',
      name: ref.name,
      uid: vd.metadata.uid ?? '',
      source: { pvc: current, readOnly: false },
      cdrom: false,
      size,
      bootOrder: ref.bootOrder,
    },
  };
}

function resolveImage(image: VirtualImage | ClusterVirtualImage | undefined, ref: Pick<BlockDeviceRef, 'kind' | 'name' | 'bootOrder'>): Resolution {
  if (image === undefined) return { ok: false, problem: `${ref.kind} ${ref.name} not found` };
  const status = image.status;
  const size = status?.size?.unpacked;
  if (status?.phase !== 'Ready') return { ok: false, problem: `${ref.kind} ${ref.name} is not ready (phase ${status?.phase ?? 'unknown'})`, size };
  const pvc = status.target !== undefined && 'persistentVolumeClaimName' in status.target ? status.target.persistentVolumeClaimName : undefined;
  const registry = status.target?.registryURL;
  const source = pvc !== undefined ? { pvc, readOnly: true } : registry !== undefined ? { image: registry } : undefined;
  if (source === undefined) return { ok: false, problem: `${ref.kind} ${ref.name} has no storage location yet`, size };
  const kind = ref.kind === 'VirtualDisk' ? 'VirtualImage' : ref.kind;
  return { ok: true, device: { kind, name: ref.name, uid: image.metadata.uid ?? '', source, cdrom: status.cdrom === true, size, bootOrder: ref.bootOrder } };
}
