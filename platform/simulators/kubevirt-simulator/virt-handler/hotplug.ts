/**
 * virt-handler's part of a hot-plugged volume, as KubeVirt v1.6's handler reports it in the instance's
 * `volumeStatus` (`updateHotplugVolumeStatus`), on what real virt-controller wrote there: once the
 * volume's attachment pod is ready (`hotplugVolume.attachPodUID`, phase `AttachedToNode`) the handler
 * mounts it into the launcher pod (`MountedToPod`, `VolumeMountedToPod`); a mounted volume is attached
 * to the domain and gets its target device (`Ready`, `VolumeReady`, the next free `sd<x>`); a volume
 * gone from the spec is detached and unmounted (`UnMountedFromPod`, `VolumeUnMountedFromPod`, no
 * target), after which virt-controller deletes the attachment pod and drops the entry. One move per
 * step; each write brings the next event.
 */
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { StepContext } from '../context.js';
import { writeInstance } from './write.js';

type VMI = InternalVirtualMachineInstance;
type Entry = Record<string, unknown> & { name?: string; target?: string; phase?: string; hotplugVolume?: { attachPodUID?: string } };

const MOUNTABLE = new Set(['Bound', 'Pending', 'AttachedToNode']);
const UNMOUNTABLE = new Set(['Ready', 'MountedToPod', 'AttachedToNode']);

/** The target device libvirt gives a disk on `bus`: the first `sd<x>` (or `vd<x>` on virtio) no volume holds. */
export function freeTarget(bus: string | undefined, taken: ReadonlySet<string>): string {
  const prefix = bus === 'virtio' ? 'vd' : 'sd';
  for (let i = 0; i < 26; i++) {
    const t = `${prefix}${String.fromCharCode(97 + i)}`;
    if (!taken.has(t)) return t;
  }
  throw new RangeError(`no free ${prefix} target left`);
}

/** The volume status after one handler move on each hot-plugged volume, or undefined when nothing moves. */
export function hotplugMoves(vmi: VMI): Record<string, unknown>[] | undefined {
  const entries = (vmi.status?.volumeStatus ?? []) as Entry[];
  const inSpec = new Set((vmi.spec.volumes ?? []).map((v) => v.name));
  const disks = (vmi.spec.domain.devices?.['disks'] ?? []) as { name: string; disk?: { bus?: string }; cdrom?: { bus?: string } }[];
  const taken = new Set(entries.map((e) => e.target ?? '').filter((t) => t !== ''));
  let moved = false;
  const next = entries.map((e): Entry => {
    const name = e.name ?? '';
    if (e.hotplugVolume === undefined || name === '') return e;
    if (!inSpec.has(name)) {
      if (!UNMOUNTABLE.has(e.phase ?? '')) return e;
      moved = true;
      return {
        ...e,
        target: '',
        phase: 'UnMountedFromPod',
        reason: 'VolumeUnMountedFromPod',
        message: `Volume ${name} has been unmounted from virt-launcher pod`,
      };
    }
    if ((e.target ?? '') !== '') return e;
    if (e.phase === 'MountedToPod') {
      const disk = disks.find((d) => d.name === name);
      const target = freeTarget(disk?.disk?.bus ?? disk?.cdrom?.bus, taken);
      taken.add(target);
      moved = true;
      return { ...e, target, phase: 'Ready', reason: 'VolumeReady', message: `Successfully attach hotplugged volume ${name} to VM` };
    }
    if (MOUNTABLE.has(e.phase ?? '') && (e.hotplugVolume.attachPodUID ?? '') !== '') {
      moved = true;
      return { ...e, phase: 'MountedToPod', reason: 'VolumeMountedToPod', message: `Volume ${name} has been mounted in virt-launcher pod` };
    }
    return e;
  });
  return moved ? next : undefined;
}

/** One step for the hot-plugged volumes of a running instance that is not migrating. */
export async function handleHotplug(ctx: StepContext, vmi: VMI): Promise<void> {
  if (vmi.status?.phase !== 'Running' || vmi.metadata.deletionTimestamp !== undefined) return;
  const migration = vmi.status.migrationState;
  if (migration?.targetNode && migration.completed !== true && migration.failed !== true) return;
  const volumeStatus = hotplugMoves(vmi);
  if (volumeStatus === undefined) return;
  const key = `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;
  const phases = volumeStatus.filter((v) => v['hotplugVolume'] !== undefined).map((v) => `${String(v['name'])}=${String(v['phase'])}`);
  ctx.log.info({ vm: key, volumes: phases }, 'hot-plugged volumes moved');
  await writeInstance(ctx, vmi, { status: { volumeStatus } });
}
