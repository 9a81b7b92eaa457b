/**
 * virt-handler's part of volume hot-plug for a real guest (`qemu/hotplug.ts`): a hot-pluggable volume
 * in the running instance's spec that the guest lacks is plugged into the QEMU process (the claim's
 * `disk.img` on this machine, as the storage simulator made it), and only then is its `volumeStatus`
 * entry `Ready` (`VolumeReady`, target `vd<x>`): the attachment's `Attached` means the guest has the
 * disk; an empty writable volume first gets a blank sparse `disk.img` of its capacity, as KubeVirt's
 * launcher makes on a filesystem claim. A hot-plugged disk whose volume left the spec is unplugged (the guest releases it), and then its
 * entry goes. What fails (no claim, no image, QEMU's refusal, a guest that keeps the disk) is said in
 * the entry (`HotplugFailed` / `UnplugFailed` with the reason) and tried again; the guest runs on.
 */
import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseQuantity } from '../../../../shared/api/k8s/quantity.js';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { StepContext } from '../context.js';
import { diskFileIn } from '../qemu/backend.js';
import type { QemuGuest } from '../qemu/guest-process.js';
import { plugDisk, unplugDisk, type HotplugDisk } from '../qemu/hotplug.js';
import { DISK_IMAGE, volumeOnDisk, type Volume } from './firmware.js';
import { freeTarget } from './hotplug.js';
import { writeInstance } from './write.js';

type VMI = InternalVirtualMachineInstance;
type VolumeStatus = { name?: string; target?: string; phase?: string } & Record<string, unknown>;

/** How soon a failed plug or unplug is tried again (the node agent's watch tick brings the step). */
export const HOTPLUG_RETRY_MS = 5000;
export const HOTPLUG_FAILED_REASON = 'HotplugFailed';
export const UNPLUG_FAILED_REASON = 'UnplugFailed';

/** When each volume of a guest was last tried and failed. */
const lastFailure = new WeakMap<QemuGuest, Map<string, number>>();

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export function isHotpluggable(volume: Volume): boolean {
  const source = (volume['persistentVolumeClaim'] ?? volume['containerDisk']) as { hotpluggable?: boolean } | undefined;
  return source?.hotpluggable === true;
}

/**
 * A blank sparse `disk.img` of the volume's capacity in an empty volume directory, as KubeVirt's
 * launcher makes one on a filesystem claim (a blank VirtualDisk's volume holds no image yet).
 */
async function blankImage(dir: string, capacity: string | undefined): Promise<void> {
  const file = join(dir, DISK_IMAGE);
  await writeFile(file, '', { flag: 'wx' });
  await truncate(file, parseQuantity(capacity) ?? 1 << 30);
}

/** The file to plug for a hot-plugged volume on this machine, or why there is none. */
async function sourceOf(ctx: StepContext, vmi: VMI, volume: Volume): Promise<HotplugDisk | string> {
  const pvc = volume['persistentVolumeClaim'] as { claimName?: string; readOnly?: boolean } | undefined;
  if (pvc?.claimName === undefined)
    return `volume ${volume.name}: only a PersistentVolumeClaim has a disk file on this machine (a containerDisk image has none)`;
  const onDisk = await volumeOnDisk(vmi.metadata.namespace ?? '', volume, ctx.volumes);
  if (onDisk === undefined) return `volume ${volume.name}: claim ${pvc.claimName} is missing or not bound to a volume on this machine`;
  try {
    let file = await diskFileIn(onDisk.dir);
    if (file === undefined && pvc.readOnly !== true) {
      await blankImage(onDisk.dir, onDisk.capacity);
      file = await diskFileIn(onDisk.dir);
    }
    if (file === undefined) return `volume ${volume.name}: the volume of claim ${pvc.claimName} holds no disk image (${onDisk.dir}/${DISK_IMAGE})`;
    return { name: volume.name, ...file, readOnly: pvc.readOnly === true };
  } catch (err: unknown) {
    return `volume ${volume.name}: the disk image of claim ${pvc.claimName} cannot be used: ${errorText(err)}`;
  }
}

/** Whether a failed volume may be tried again now (always, when it has not failed). */
function due(guest: QemuGuest, name: string): boolean {
  const at = lastFailure.get(guest)?.get(name);
  return at === undefined || Date.now() - at >= HOTPLUG_RETRY_MS;
}

function noteFailure(guest: QemuGuest, name: string, failed: boolean): void {
  const map = lastFailure.get(guest) ?? new Map<string, number>();
  lastFailure.set(guest, map);
  if (failed) map.set(name, Date.now());
  else map.delete(name);
}

type Statuses = { list: VolumeStatus[] };

function put(statuses: Statuses, entry: VolumeStatus): void {
  const { list } = statuses;
  statuses.list = list.some((s) => s.name === entry.name) ? list.map((s) => (s.name === entry.name ? entry : s)) : [...list, entry];
}

/** Plug a hot-pluggable volume the guest lacks (unless a failed try is too recent); the entry says Ready or why not. */
async function plugVolume(ctx: StepContext, vmi: VMI, guest: QemuGuest, volume: Volume, statuses: Statuses): Promise<void> {
  const vm = `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;
  const known = statuses.list.find((s) => s.name === volume.name) ?? { name: volume.name, target: '' };
  if (!guest.disks.has(volume.name)) {
    if (!due(guest, volume.name)) return;
    const source = await sourceOf(ctx, vmi, volume);
    const problem = typeof source === 'string' ? source : await plugDisk(guest, source).then(() => undefined, errorText);
    noteFailure(guest, volume.name, problem !== undefined);
    if (problem !== undefined) {
      if (known['message'] !== problem) ctx.log.warn({ vm, volume: volume.name, problem }, 'hot-plug into the guest failed; the guest runs on');
      const phase = known.phase === 'Ready' || known.phase === undefined ? 'Pending' : known.phase;
      put(statuses, { ...known, phase, reason: HOTPLUG_FAILED_REASON, message: problem });
      return;
    }
    ctx.log.info({ vm, volume: volume.name, port: guest.disks.get(volume.name)?.port }, 'volume hot-plugged into the guest');
  }
  if (known.phase === 'Ready') return;
  put(statuses, {
    ...known,
    // The guest's disks are virtio-blk: the next free `vd<x>`.
    target: known.target !== undefined && known.target !== '' ? known.target : freeTarget('virtio', new Set(statuses.list.map((x) => x.target ?? ''))),
    phase: 'Ready',
    reason: 'VolumeReady',
    message: `Successfully attach hotplugged volume ${volume.name} to VM`,
    hotplugVolume: { attachPodName: `hp-volume-${vmi.metadata.name ?? ''}`, attachPodUID: vmi.metadata.uid ?? '' },
  });
}

/** Unplug a hot-plugged disk whose volume left the spec; its entry goes once the guest let go, else it says why. */
async function unplugVolume(ctx: StepContext, vmi: VMI, guest: QemuGuest, name: string, statuses: Statuses): Promise<void> {
  if (!due(guest, name)) return;
  const vm = `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;
  const port = guest.disks.get(name)?.port;
  const problem = await unplugDisk(guest, name).then(() => undefined, errorText);
  noteFailure(guest, name, problem !== undefined);
  if (problem === undefined) {
    ctx.log.info({ vm, volume: name, port }, 'volume unplugged: the guest released it');
    statuses.list = statuses.list.filter((s) => s.name !== name);
    return;
  }
  ctx.log.warn({ vm, volume: name, problem }, 'unplug from the guest failed; tried again later');
  const known = statuses.list.find((s) => s.name === name);
  if (known !== undefined) put(statuses, { ...known, phase: 'Detaching', reason: UNPLUG_FAILED_REASON, message: problem });
}

/**
 * Bring the guest's disks to the instance's hot-pluggable volumes and write what changed in
 * `volumeStatus`; true when it wrote (the write's event brings the next step).
 */
export async function syncHotplug(ctx: StepContext, vmi: VMI, guest: QemuGuest): Promise<boolean> {
  if (!guest.running) return false;
  const migration = vmi.status?.migrationState as { completed?: boolean; failed?: boolean } | undefined;
  // As KubeVirt: no hot-plug while a live migration runs.
  if (migration !== undefined && migration.completed !== true && migration.failed !== true) return false;
  const before = (vmi.status?.volumeStatus ?? []) as VolumeStatus[];
  const statuses: Statuses = { list: [...before] };
  const volumes = vmi.spec.volumes ?? [];
  for (const volume of volumes.filter(isHotpluggable)) await plugVolume(ctx, vmi, guest, volume, statuses);
  const inSpec = new Set(volumes.map((v) => v.name));
  const leaving = [...guest.disks.entries()].filter(([n, d]) => !inSpec.has(n) && d.port !== undefined).map(([n]) => n);
  for (const name of leaving) await unplugVolume(ctx, vmi, guest, name, statuses);
  // A volume gone from the spec whose disk the guest does not have: its entry goes (virt-controller's part).
  const after = statuses.list.filter((s) => inSpec.has(s.name ?? '') || guest.disks.has(s.name ?? '') || s.phase !== 'Detaching');
  if (JSON.stringify(after) === JSON.stringify(before)) return false;
  await writeInstance(ctx, vmi, { status: { volumeStatus: after } });
  return true;
}
