/**
 * virt-handler's part of one instance with a real guest (`qemu/`): once virt-controller has scheduled
 * the instance and its launcher pod runs, a QEMU process starts from the instance's spec with the disk
 * files of its PVC volumes, and the instance is `Running` once the process runs. From then on the
 * handler watches the process every `WATCH_MS`: SeaBIOS's "No bootable device" → `GuestBootable=False`
 * (NoBootableDevice); the guest agent's answers → `AgentConnected`, `guestOSInfo`, the interface's
 * name and MAC, `fsFreezeStatus` (`frozen` while frozen); QEMU ending by itself → `Succeeded` when the guest powered off (exit 0), `Failed`
 * otherwise (killed, crashed), as KubeVirt's virt-handler reports a domain that shut down or crashed.
 * Hot-pluggable volumes go into and out of the running guest on every step (`hotplug.ts`). A guest
 * this machine cannot hold is not started: `Synchronized=False` (InsufficientHostMemory) until there is room.
 */
import {
  activePod,
  FS_FREEZE_STATUS_FROZEN,
  GUEST_BOOTABLE_CONDITION,
  LIBVIRT_VERSION_ANNOTATION,
  NO_BOOTABLE_DEVICE_REASON,
  NODE_NAME_LABEL,
  QEMU_VERSION_ANNOTATION,
  SYNCHRONIZED_CONDITION,
} from '../../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { withConditions, type Condition, type StepContext } from '../context.js';
import type { LauncherPod } from '../kube.js';
import { CILIUM_IP_ANNOTATION, podState } from '../launcher.js';
import { diskFileIn, type GuestBackend } from '../qemu/backend.js';
import { INSUFFICIENT_HOST_MEMORY, InsufficientHostMemory } from '../qemu/host-memory.js';
import type { AgentReport, QemuGuest } from '../qemu/guest-process.js';
import type { GuestDisk } from '../qemu/plan.js';
import { volumeDir } from './firmware.js';
import { LIBVIRT_VERSION, volumeStatus } from './guest.js';
import { isHotpluggable, syncHotplug } from './guest-hotplug.js';
import { writeInstance, type InstanceChange } from './write.js';

type VMI = InternalVirtualMachineInstance;

/** How often a running guest is looked at (process, firmware log, guest agent). */
export const WATCH_MS = 2000;
/** How often a guest this machine could not hold is tried again. */
export const ROOM_RETRY_MS = 5000;
/** How long one guest agent command may take (a TCG guest on a busy machine answers slowly). */
const AGENT_TIMEOUT_MS = 5000;
/** The instance annotation that says how the guest runs here (accelerator, memory given and asked). */
export const GUEST_ANNOTATION = 'kubevirt-simulator.local/guest';

const keyOf = (vmi: VMI): string => `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;

/** The image files of the instance's PVC volumes (volumes without one are left out: the firmware will not find them). */
export async function diskFiles(ctx: StepContext, vmi: VMI): Promise<Omit<GuestDisk, 'cdrom' | 'bootOrder'>[]> {
  const out: Omit<GuestDisk, 'cdrom' | 'bootOrder'>[] = [];
  for (const volume of vmi.spec.volumes ?? []) {
    const dir = await volumeDir(vmi.metadata.namespace ?? '', volume, ctx.volumes);
    const file = dir === undefined ? undefined : await diskFileIn(dir);
    if (file === undefined) ctx.log.info({ vm: keyOf(vmi), volume: volume.name }, 'the volume has no disk image on this machine; the guest starts without it');
    else {
      const readOnly = (volume.persistentVolumeClaim as { readOnly?: boolean } | undefined)?.readOnly === true;
      out.push({ name: volume.name, ...file, hotpluggable: isHotpluggable(volume), readOnly });
    }
  }
  return out;
}

/** One step of a real guest; the next event or watch tick brings the next step. */
export async function runRealGuest(ctx: StepContext, guests: GuestBackend, vmi: VMI, pods: readonly LauncherPod[]): Promise<void> {
  const uid = vmi.metadata.uid ?? '';
  const phase = vmi.status?.phase;
  if (vmi.metadata.deletionTimestamp !== undefined) return;
  if (phase === 'Failed' || phase === 'Succeeded') {
    await guests.end(uid, 0);
    return;
  }
  if (phase === 'Scheduled') return startGuest(ctx, guests, vmi, pods);
  if (phase !== 'Running') return;
  const guest = guests.get(uid);
  if (guest === undefined) {
    // The node agent holds every guest it started; a running instance without one lost its domain
    // (the node agent restarted): KubeVirt's virt-handler fails such an instance.
    ctx.log.warn({ vm: keyOf(vmi) }, 'a running instance has no QEMU process here: the guest failed');
    await patch(ctx, vmi, { phase: 'Failed', reason: 'GuestNotFound' });
    return;
  }
  // Hot-plug first: a write here ends the step (the next one reads the new version).
  if (await syncHotplug(ctx, vmi, guest)) return;
  const tick = `watch:${uid}`;
  if (!ctx.elapsed(tick, WATCH_MS, keyOf(vmi))) return;
  ctx.forget(tick);
  ctx.elapsed(tick, WATCH_MS, keyOf(vmi)); // the next look
  await watchGuest(ctx, guests, vmi, guest);
}

/** The timing key of an instance's next try after a refusal for lack of memory. */
const roomRetryKey = (vmi: VMI): string => `room:${vmi.metadata.uid ?? ''}`;

/**
 * A guest this machine cannot hold (`qemu/host-memory.ts`): the instance stays Scheduled with
 * `Synchronized=False` (reason InsufficientHostMemory, the figures in the message), as virt-handler
 * reports a domain it could not sync, and the start is tried again every ROOM_RETRY_MS.
 */
async function refuseGuest(ctx: StepContext, vmi: VMI, refused: InsufficientHostMemory): Promise<void> {
  const retry = roomRetryKey(vmi);
  ctx.forget(retry);
  ctx.elapsed(retry, ROOM_RETRY_MS, keyOf(vmi));
  const conditions = vmi.status?.conditions ?? [];
  if (conditions.some((c) => c.type === SYNCHRONIZED_CONDITION && c.reason === refused.reason)) return;
  ctx.log.warn({ vm: keyOf(vmi), reason: refused.reason }, refused.message);
  const condition: Condition = { type: SYNCHRONIZED_CONDITION, status: 'False', reason: refused.reason, message: refused.message };
  await patch(ctx, vmi, { conditions: withConditions(conditions, [condition]) });
}

async function startGuest(ctx: StepContext, guests: GuestBackend, vmi: VMI, pods: readonly LauncherPod[]): Promise<void> {
  const node = vmi.status?.nodeName ?? '';
  const pod = activePod(vmi, pods);
  if (node === '' || pod === undefined || podState(pod) !== 'running') return;
  let guest: QemuGuest;
  try {
    guest = await guests.ensure(vmi, await diskFiles(ctx, vmi));
  } catch (err: unknown) {
    if (err instanceof InsufficientHostMemory) return refuseGuest(ctx, vmi, err);
    throw err;
  }
  ctx.forget(roomRetryKey(vmi));
  const ip = vmi.metadata.annotations?.[CILIUM_IP_ANNOTATION] ?? pod.status?.podIP ?? '';
  const { plan } = guest;
  const shown = `qemu ${guest.accel}, ${plan.cpus} CPU, ${plan.givenMiB} MiB${plan.capped ? ` (asked ${plan.memoryMiB} MiB, capped at ${guests.memoryCapMiB} MiB on this machine)` : ''}`;
  ctx.log.info({ vm: keyOf(vmi), node, pid: guest.pid, guest: shown }, 'guest QEMU process runs: the instance is Running');
  const machine = vmi.spec.domain['machine'] as { type?: string } | undefined;
  await patch(
    ctx,
    vmi,
    {
      phase: 'Running',
      interfaces: [{ name: 'default', ipAddress: ip, ipAddresses: [ip], infoSource: 'domain' }],
      conditions: withConditions(
        (vmi.status?.conditions ?? []).filter((c) => !(c.type === SYNCHRONIZED_CONDITION && c.reason === INSUFFICIENT_HOST_MEMORY)),
        [{ type: 'LiveMigratable', status: 'True' }],
      ),
      machine: { type: machine?.type ?? 'q35' },
      selinuxContext: 'none',
      volumeStatus: volumeStatus(vmi),
    },
    {
      labels: { [NODE_NAME_LABEL]: node },
      annotations: { [QEMU_VERSION_ANNOTATION]: await guests.version(), [LIBVIRT_VERSION_ANNOTATION]: LIBVIRT_VERSION, [GUEST_ANNOTATION]: shown },
    },
  );
}

async function watchGuest(ctx: StepContext, guests: GuestBackend, vmi: VMI, guest: QemuGuest): Promise<void> {
  const exit = guest.exitStatus;
  if (exit !== undefined) {
    // Before the firmware's log: a guest with nothing to boot can still have its QEMU killed.
    const poweredOff = exit.code === 0 && exit.signal === null;
    const message = (await guest.failure())?.message;
    ctx.log.info({ vm: keyOf(vmi), exit, message }, poweredOff ? 'the guest powered itself off' : 'QEMU ended under a running guest: the guest failed');
    await guests.end(vmi.metadata.uid ?? '', 0);
    await patch(ctx, vmi, { phase: poweredOff ? 'Succeeded' : 'Failed', ...(poweredOff ? {} : { reason: 'GuestCrashed' }) });
    return;
  }
  const failure = await guest.failure();
  const conditions = vmi.status?.conditions ?? [];
  if (failure?.reason === 'NoBootableDevice') {
    if (conditions.some((c) => c.type === GUEST_BOOTABLE_CONDITION && c.status === 'False')) return;
    ctx.log.info({ vm: keyOf(vmi) }, 'the guest firmware finds no bootable device');
    const noBoot: Condition = { type: GUEST_BOOTABLE_CONDITION, status: 'False', reason: NO_BOOTABLE_DEVICE_REASON, message: 'No bootable device.' };
    await patch(ctx, vmi, { conditions: withConditions(conditions, [noBoot]) });
    return;
  }
  const report = await guest.agentReport(AGENT_TIMEOUT_MS);
  const connected = conditions.some((c) => c.type === 'AgentConnected' && c.status === 'True');
  if (report === undefined) {
    if (connected)
      await patch(ctx, vmi, {
        conditions: withConditions(
          conditions.filter((c) => c.type !== 'AgentConnected'),
          [],
        ),
      });
    return;
  }
  const status = agentStatus(vmi, report);
  const reported = vmi.status?.guestOSInfo ?? {};
  const frozen = (vmi.status as { fsFreezeStatus?: string } | undefined)?.fsFreezeStatus ?? null;
  const sameOs = Object.entries(status.guestOSInfo).every(([k, v]) => reported[k] === v);
  if (connected && sameOs && frozen === status.fsFreezeStatus) return;
  if (!connected || !sameOs) ctx.log.info({ vm: keyOf(vmi), os: status.guestOSInfo.prettyName }, 'the guest agent answers');
  if (frozen !== status.fsFreezeStatus) ctx.log.info({ vm: keyOf(vmi), fsFreezeStatus: report.fsFreeze }, 'the guest agent reports the filesystems');
  await patch(ctx, vmi, { ...status, conditions: withConditions(conditions, [{ type: 'AgentConnected', status: 'True' }]) });
}

/**
 * What the guest agent's answers put on the instance: `guestOSInfo` in KubeVirt's names, and the
 * interface with the guest's own name and MAC. The address stays the one our IPAM gave (the guest's
 * user-mode network address, 10.0.2.15, is this machine's private affair).
 */
export function agentStatus(
  vmi: VMI,
  report: AgentReport,
): { guestOSInfo: Record<string, string>; interfaces: Record<string, unknown>[]; fsFreezeStatus: 'frozen' | null } {
  const os = report.osInfo;
  const pick = (k: string): string => os[k] ?? '';
  const guestOSInfo = {
    id: pick('id'),
    name: pick('name'),
    prettyName: pick('pretty-name'),
    version: pick('version'),
    versionId: pick('version-id'),
    kernelRelease: pick('kernel-release'),
    kernelVersion: pick('kernel-version'),
    machine: pick('machine'),
  };
  const nic = report.interfaces.find((i) => i.name !== 'lo');
  const interfaces = (vmi.status?.interfaces ?? []).map((i, n) =>
    n === 0 && nic !== undefined
      ? { ...i, interfaceName: nic.name, ...(nic['hardware-address'] === undefined ? {} : { mac: nic['hardware-address'] }), infoSource: 'domain, guest-agent' }
      : i,
  );
  // As KubeVirt: `fsFreezeStatus` is there while the guest is frozen, gone once it thaws.
  return { guestOSInfo, interfaces, fsFreezeStatus: report.fsFreeze === FS_FREEZE_STATUS_FROZEN ? FS_FREEZE_STATUS_FROZEN : null };
}

async function patch(ctx: StepContext, vmi: VMI, status: Record<string, unknown>, metadata: Omit<InstanceChange, 'status'> = {}): Promise<void> {
  await writeInstance(ctx, vmi, { ...metadata, status });
}
