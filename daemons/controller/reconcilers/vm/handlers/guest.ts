import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import { activePod, LIBVIRT_VERSION_ANNOTATION, QEMU_VERSION_ANNOTATION } from '../../../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { Deps } from '../../../deps.js';
import type { Handler, HandlerContext } from '../../../engine/reconciler.js';
import type { Pod } from '../../../kube/resources.js';
import { condition, dropCondition, podsOfVM, type VMState, type VMStatus } from '../state.js';
import { goDuration } from './lifecycle.js';

const Agent = VMCondition.AgentReady;
const Migratable = VMCondition.Migratable;

/** KubeVirt's instance condition types and LiveMigratable reasons the original reads. */
const AGENT_CONNECTED = 'AgentConnected';
const LIVE_MIGRATABLE = 'LiveMigratable';
const DISKS_NOT_MIGRATABLE = 'DisksNotLiveMigratable';
const HOST_DEVICE_NOT_MIGRATABLE = 'HostDeviceNotLiveMigratable';

/** Phases in which the original shows no AgentReady condition at all. */
const NO_AGENT_PHASES = new Set<VMStatus['phase']>(['Pending', 'Starting', 'Stopped']);

export const DISKS_NOT_MIGRATABLE_MESSAGE =
  'Live migration requires all disks to use ReadWriteMany (shared) storage. Make sure the StorageClass supports the ReadWriteMany access mode.';
export const HOST_DEVICE_NOT_MIGRATABLE_MESSAGE =
  'Live migration is blocked because the VirtualMachine has a device that cannot be migrated. Remove it to enable live migration.';

/**
 * What the guest and its launcher report, as the original's agent, migrating and statistic handlers
 * show it: AgentReady (from the instance's AgentConnected), Migratable (from LiveMigratable),
 * `status.versions` (the launcher's qemu and libvirt, while Running), `status.virtualMachinePods`,
 * `status.guestOSInfo` and the stats' `guestOSAgentStarting`.
 * Runs after `lifecycle`, which sets the phase these depend on.
 */
export function guestHandler(deps: Deps): Handler<VMState> {
  return {
    name: 'guest',
    handle(s, ctx): void {
      if (s.obj.metadata.deletionTimestamp !== undefined) return;
      agentReady(s, ctx);
      migratable(s, ctx);
      versions(s);
      guestOS(s, ctx.now);
      virtualMachinePods(s, podsOfVM(deps.caches.pods, s.obj));
    },
  };
}

function instanceCondition(vmi: InternalVirtualMachineInstance | InternalVirtualMachine | undefined, type: string) {
  return vmi?.status?.conditions?.find((c) => c.type === type);
}

function agentReady(s: VMState, ctx: HandlerContext): void {
  if (NO_AGENT_PHASES.has(s.status.phase)) return dropCondition(s, Agent.type);
  if (s.kvvmi === undefined) {
    return condition(s, ctx, { type: Agent.type, status: 'False', reason: Agent.reason.AgentNotReady, message: 'VirtualMachine is not running.' });
  }
  const connected = instanceCondition(s.kvvmi, AGENT_CONNECTED);
  if (connected?.status === 'True')
    return condition(s, ctx, { type: Agent.type, status: 'True', reason: Agent.reason.AgentReady, message: connected.message ?? '' });
  if (connected?.status === 'False')
    return condition(s, ctx, { type: Agent.type, status: 'False', reason: Agent.reason.AgentNotReady, message: connected.message ?? '' });
  condition(s, ctx, { type: Agent.type, status: 'False', reason: Agent.reason.AgentNotReady, message: 'Failed to connect to VM Agent.' });
}

/**
 * Migratable describes a running VM: without an instance it is removed (the internal VM's conditions
 * keep the last run's answer). LiveMigratable is read from the instance, else from the internal VM
 * (KubeVirt copies it there).
 */
function migratable(s: VMState, ctx: HandlerContext): void {
  if (s.kvvm === undefined || s.kvvmi === undefined) return dropCondition(s, Migratable.type);
  const live = instanceCondition(s.kvvmi, LIVE_MIGRATABLE) ?? instanceCondition(s.kvvm, LIVE_MIGRATABLE);
  const no = (reason: string, message: string): void => condition(s, ctx, { type: Migratable.type, status: 'False', reason, message });
  if (live?.reason === DISKS_NOT_MIGRATABLE) return no(Migratable.reason.DisksNotMigratable, DISKS_NOT_MIGRATABLE_MESSAGE);
  if (live?.reason === HOST_DEVICE_NOT_MIGRATABLE) return no(Migratable.reason.HostDevicesNotMigratable, HOST_DEVICE_NOT_MIGRATABLE_MESSAGE);
  if (live?.status === 'False') return no(Migratable.reason.NonMigratable, live.message ?? '');
  condition(s, ctx, { type: Migratable.type, status: 'True', reason: Migratable.reason.VirtualMachineMigratable });
}

/** The launcher's versions, read while the VM is Running (kept as they were otherwise, as the original does). */
function versions(s: VMState): void {
  if (s.kvvmi === undefined || s.status.phase !== 'Running') return;
  const annotations = s.kvvmi.metadata.annotations ?? {};
  const qemu = annotations[QEMU_VERSION_ANNOTATION];
  const libvirt = annotations[LIBVIRT_VERSION_ANNOTATION];
  if (qemu === undefined && libvirt === undefined) return;
  s.status.versions = { ...(libvirt !== undefined ? { libvirt } : {}), ...(qemu !== undefined ? { qemu } : {}) };
}

/**
 * The guest OS the agent reports (the instance's `guestOSInfo`, gone when it has none), and, as the
 * original's statistic handler, `launchTimeDuration.guestOSAgentStarting`: the time from the last
 * Running transition to the pass that first sees the agent's answer (whole seconds); dropped while the
 * running instance has no answer.
 */
function guestOS(s: VMState, now: Date): void {
  const info = s.kvvmi?.status?.guestOSInfo;
  const answered = info !== undefined && Object.keys(info).length > 0;
  const hadAnswer = s.status.guestOSInfo !== undefined && Object.keys(s.status.guestOSInfo).length > 0;
  const stats = s.status.stats;
  if (s.status.phase === 'Running' && stats !== undefined && s.kvvmi !== undefined) {
    const launch = { ...stats.launchTimeDuration };
    const ranAt = [...(stats.phasesTransitions ?? [])].reverse().find((t) => t.phase === 'Running')?.timestamp;
    if (!answered) delete launch.guestOSAgentStarting;
    else if (!hadAnswer && ranAt !== undefined) launch.guestOSAgentStarting = goDuration(Math.floor(now.getTime() / 1000) * 1000 - Date.parse(ranAt));
    if (Object.keys(launch).length > 0) stats.launchTimeDuration = launch;
    else delete stats.launchTimeDuration;
  }
  if (answered) s.status.guestOSInfo = info;
  else delete s.status.guestOSInfo;
}

/** Every launcher pod of the VM (oldest first), the one the guest runs in marked active. */
export function virtualMachinePods(s: VMState, pods: readonly Pod[]): void {
  if (pods.length === 0) {
    delete s.status.virtualMachinePods;
    return;
  }
  const active = s.kvvmi === undefined ? undefined : activePod(s.kvvmi, pods);
  const ordered = [...pods].sort(
    (a, b) =>
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  );
  s.status.virtualMachinePods = ordered.map((p) => ({ name: p.metadata.name ?? '', active: p === active }));
}
