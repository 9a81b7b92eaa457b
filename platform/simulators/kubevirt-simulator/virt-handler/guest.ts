/**
 * virt-handler's part of one instance on its node: once virt-controller has scheduled the instance
 * (phase Scheduled, `nodeName`) and kwok runs its launcher pod, the guest "boots" and the handler
 * reports what KubeVirt v1.6's virt-handler writes on the instance: phase Running, the interfaces
 * with the address the guest agent reports (the template's `cni.cilium.io/ipAddress`: the IP our
 * IPAM gave; the pod IP otherwise), the guest OS info, `AgentConnected`, the machine type, the SELinux
 * context (`none`: no SELinux here; virt-controller needs one to render a migration target), a
 * volume status per volume with its target device, `LiveMigratable`, the launcher's qemu and libvirt
 * versions (instance annotations) and, for a guest with nothing to boot, `GuestBootable=False`
 * (NoBootableDevice, no agent). It never makes or deletes instances or pods. With a guest backend
 * (`ctx.guests`) the guest is a real QEMU process instead (`real-guest.ts`).
 */
import {
  activePod,
  GUEST_BOOTABLE_CONDITION,
  LIBVIRT_VERSION_ANNOTATION,
  NO_BOOTABLE_DEVICE_REASON,
  NODE_NAME_LABEL,
  QEMU_VERSION_ANNOTATION,
} from '../../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { withConditions, type StepContext } from '../context.js';
import { findsBootableDevice } from './firmware.js';
import { runRealGuest } from './real-guest.js';
import { writeInstance } from './write.js';
import type { LauncherPod } from '../kube.js';
import { CILIUM_IP_ANNOTATION, podState } from '../launcher.js';

type VMI = InternalVirtualMachineInstance;

/** The hypervisor versions the simulated launcher reports (those of the original's current launcher image). */
export const QEMU_VERSION = '9.2.0';
export const LIBVIRT_VERSION = '10.9.0';
/** The instance annotations through which the launcher reports its hypervisor versions. */
export function launcherVersions(): Record<string, string> {
  return { [QEMU_VERSION_ANNOTATION]: QEMU_VERSION, [LIBVIRT_VERSION_ANNOTATION]: LIBVIRT_VERSION };
}

/** The guest OS the agent reports: only a guest that booted has an agent to answer. */
export function guestOSInfoOf(bootable: boolean): { guestOSInfo?: Record<string, string> } {
  return bootable ? { guestOSInfo: { id: 'simulated', name: 'kubevirt-simulator', prettyName: 'Simulated guest (no hypervisor)' } } : {};
}

/**
 * What virt-handler (and virt-controller) say about the running guest: the agent connected,
 * live-migratable (the simulator's storage and networks all migrate), and the firmware's answer.
 */
export function guestConditions(bootable: boolean): { type: string; status: string; reason?: string; message?: string }[] {
  const migratable = { type: 'LiveMigratable', status: 'True' };
  if (bootable) return [{ type: 'AgentConnected', status: 'True' }, migratable];
  // No operating system, so no guest agent either.
  return [migratable, { type: GUEST_BOOTABLE_CONDITION, status: 'False', reason: NO_BOOTABLE_DEVICE_REASON, message: 'No bootable device.' }];
}

/** `sda`, `sdb`, … (or `vda` … on virtio), in the order of the disks, as libvirt names them. */
function volumeTargets(vmi: VMI): Map<string, string> {
  const disks = (vmi.spec.domain.devices?.['disks'] ?? []) as { name: string; disk?: { bus?: string }; cdrom?: { bus?: string } }[];
  const counters = new Map<string, number>();
  const out = new Map<string, string>();
  for (const d of disks) {
    const prefix = (d.disk?.bus ?? d.cdrom?.bus) === 'virtio' ? 'vd' : 'sd';
    const n = counters.get(prefix) ?? 0;
    counters.set(prefix, n + 1);
    out.set(d.name, `${prefix}${String.fromCharCode(97 + n)}`);
  }
  return out;
}

/** The volume status with an entry for every volume of the spec (entries others wrote, hot-plugged ones, kept). */
export function volumeStatus(vmi: VMI): Record<string, unknown>[] {
  const existing = vmi.status?.volumeStatus ?? [];
  const targets = volumeTargets(vmi);
  const have = new Set(existing.map((v) => v['name']));
  const added = (vmi.spec.volumes ?? [])
    .map((v) => v.name)
    .filter((name) => !have.has(name))
    .map((name) => ({ name, target: targets.get(name) ?? '' }));
  return [...existing, ...added];
}

/**
 * A guest that ends under virt-handler: the instance deleted (the handler shuts the domain down:
 * `Succeeded`), or its launcher pod gone or ended while it ran (`Failed`, PodTerminating). Once the
 * instance is final virt-controller removes its pods and finalizers.
 */
async function endGuest(ctx: StepContext, vmi: VMI, pods: readonly LauncherPod[]): Promise<boolean> {
  const phase = vmi.status?.phase ?? '';
  if (phase !== 'Running' && !(phase === 'Scheduled' && vmi.metadata.deletionTimestamp !== undefined)) return false;
  const pod = activePod(vmi, pods);
  const state = pod === undefined ? 'gone' : podState(pod);
  const deleted = vmi.metadata.deletionTimestamp !== undefined;
  if (!deleted && state !== 'gone' && state !== 'ended' && state !== 'deleting') return false;
  const key = `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;
  ctx.log.info({ vm: key, deleted, pod: state }, deleted ? 'guest shut down: the instance is deleted' : 'the launcher pod is gone: the guest failed');
  // A real guest: ACPI power-down with the grace period when the instance is deleted; killed with its launcher.
  const how = await ctx.guests?.end(vmi.metadata.uid ?? '', deleted ? undefined : 0);
  if (how !== undefined) ctx.log.info({ vm: key, how }, 'the guest QEMU process is gone');
  await writeInstance(ctx, vmi, { status: deleted ? { phase: 'Succeeded' } : { phase: 'Failed', reason: 'PodTerminating' } });
  return true;
}

/** One step of the guest on its node; the next event (or timer) brings the next step. */
export async function runGuest(ctx: StepContext, vmi: VMI, pods: readonly LauncherPod[]): Promise<void> {
  if (await endGuest(ctx, vmi, pods)) return;
  if (ctx.guests !== undefined) return runRealGuest(ctx, ctx.guests, vmi, pods);
  if (vmi.metadata.deletionTimestamp !== undefined || vmi.status?.phase !== 'Scheduled') return;
  const node = vmi.status.nodeName ?? '';
  const pod = activePod(vmi, pods);
  if (node === '' || pod === undefined || podState(pod) !== 'running') return;
  const key = `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;
  const bootKey = `boot:${vmi.metadata.uid ?? ''}`;
  if (!ctx.elapsed(bootKey, ctx.bootDelayMs, key)) return;
  ctx.forget(bootKey);
  const ip = vmi.metadata.annotations?.[CILIUM_IP_ANNOTATION] ?? pod.status?.podIP ?? '';
  ctx.log.info({ vm: key, node, ip }, 'guest running; the guest agent reports its address');
  const machine = vmi.spec.domain['machine'] as { type?: string } | undefined;
  const bootable = await findsBootableDevice(vmi, ctx.volumes);
  if (!bootable) ctx.log.info({ vm: key }, 'the guest firmware finds no bootable device');
  await writeInstance(ctx, vmi, {
    labels: { [NODE_NAME_LABEL]: node },
    annotations: launcherVersions(),
    status: {
      phase: 'Running',
      interfaces: [{ name: 'default', ipAddress: ip, ipAddresses: [ip], infoSource: 'domain, guest-agent' }],
      conditions: withConditions(vmi.status.conditions, guestConditions(bootable)),
      ...guestOSInfoOf(bootable),
      machine: { type: machine?.type ?? 'q35' },
      selinuxContext: 'none',
      volumeStatus: volumeStatus(vmi),
    },
  });
}
