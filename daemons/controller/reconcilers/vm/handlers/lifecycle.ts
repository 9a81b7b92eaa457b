import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import { activePod, FAILED_CREATE_REASON, GUEST_BOOTABLE_CONDITION, NO_BOOTABLE_DEVICE_REASON } from '../../../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { Deps } from '../../../deps.js';
import type { Handler, HandlerContext, HandlerOutcome } from '../../../engine/reconciler.js';
import { rfc3339, type ConditionInput } from '../../../engine/conditions.js';
import { effectiveCoreFraction, requestedCpu, topologyOf } from '../kvvm/cpu.js';
import { isConditionReason } from '../../../../../shared/api/k8s/core.js';
import { phaseOf, POD_NOT_STARTED_STATUSES, printableStatusOf, syncFailureOf, UNKNOWN_STATUS, unscheduledOf, type VMPhase } from '../phase.js';
import type { Pod } from '../../../kube/resources.js';
import { condition, podsOfVM, type VMState, type VMStatus } from '../state.js';
import { networksStatus } from './network.js';

const Running = VMCondition.Running;
/** How many phase transitions status.stats keeps (the original's five). */
const MAX_TRANSITIONS = 5;

/**
 * The observed state: phase (and its history), node, Running condition, resources, networks, migration.
 * A VM still waiting for a dependency is looked at again later (not every dependency is watched).
 */
export function lifecycleHandler(deps: Deps): Handler<VMState> {
  return {
    name: 'lifecycle',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const vm = s.obj;
      const vmi = s.kvvmi;
      const pod = vmi === undefined ? undefined : activePod(vmi, podsOfVM(deps.caches.pods, vm));
      const phase = phaseOf({ deleting: vm.metadata.deletionTimestamp !== undefined, kvvm: s.kvvm, kvvmi: vmi, startPending: s.startPending, pod });
      recordPhase(s, phase, ctx);
      const node = vmi?.status?.nodeName;
      if (vmi !== undefined && node !== undefined && node !== '' && phase !== 'Pending') s.status.nodeName = node;
      else delete s.status.nodeName;
      const waiting = phase === 'Pending' || phase === 'Starting';
      const creating = waiting ? await podBeingCreated(s, deps, ctx) : undefined;
      runningCondition(s, ctx, phase, deps, waiting ? (creating?.condition ?? startFailureCondition(s, pod)) : undefined);
      s.status.resources = resourcesOf(s);
      const networks = networksStatus(s);
      if (networks.length > 0) s.status.networks = networks;
      else delete s.status.networks;
      const migration = migrationStateOf(vmi);
      if (migration !== undefined) s.status.migrationState = migration;
      if (vm.metadata.generation !== undefined) s.status.observedGeneration = vm.metadata.generation;
      // Nothing wakes a VM when its pod's volumes fail (those are events), so a pod being created is looked at again too.
      if (s.waitingFor.length > 0 || creating !== undefined) return { requeueAfterMs: deps.config.DEPENDENCY_RECHECK_INTERVAL };
    },
  };
}

function recordPhase(s: VMState, phase: VMPhase, ctx: HandlerContext): void {
  if (s.status.phase === phase) return;
  const previous = s.status.phase;
  s.status.phase = phase;
  const stats = s.status.stats ?? {};
  const timestamp = rfc3339(ctx.now);
  stats.phasesTransitions = [...(stats.phasesTransitions ?? []), { phase, timestamp }].slice(-MAX_TRANSITIONS);
  if (phase === 'Running') stats.lastStartTime = timestamp;
  const launch = launchTimes(stats.launchTimeDuration ?? {}, stats.phasesTransitions, previous, phase);
  if (Object.keys(launch).length > 0) stats.launchTimeDuration = launch;
  else delete stats.launchTimeDuration;
  s.status.stats = stats;
}

type Stats = NonNullable<VMStatus['stats']>;
type LaunchTimes = NonNullable<Stats['launchTimeDuration']>;

/**
 * The durations of the last start, as the original keeps them: reset when the VM waits or stops;
 * waiting for dependencies = Pending → Starting, starting = Starting → Running.
 */
export function launchTimes(current: LaunchTimes, transitions: NonNullable<Stats['phasesTransitions']>, from: VMPhase | undefined, to: VMPhase): LaunchTimes {
  const between = (a: VMPhase, b: VMPhase): string | undefined => {
    const last = transitions.at(-1);
    const before = transitions.at(-2);
    if (last?.phase !== b || before?.phase !== a || from !== a) return undefined;
    return goDuration(Date.parse(last.timestamp) - Date.parse(before.timestamp));
  };
  if (to === 'Pending' || to === 'Stopped') return {};
  if (to === 'Starting') {
    const waited = between('Pending', 'Starting');
    return waited === undefined ? {} : { waitingForDependencies: waited };
  }
  if (to === 'Running') {
    const starting = between('Starting', 'Running');
    return starting === undefined ? current : { ...current, virtualMachineStarting: starting };
  }
  return current;
}

/** A whole-second duration as Go's time.Duration prints it (metav1.Duration): `0s`, `45s`, `1m5s`, `2h0m3s`. */
export function goDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  if (h > 0) return `${h}h${m}m${sec}s`;
  if (m > 0) return `${m}m${sec}s`;
  return `${sec}s`;
}

/** `stuck`: why KubeVirt cannot start the VM, shown while it is Pending or Starting. */
function runningCondition(s: VMState, ctx: HandlerContext, phase: VMPhase, deps: Deps, stuck: ConditionInput | undefined): void {
  const running = phase === 'Running' || phase === 'Migrating' || phase === 'Pause';
  const input = running ? runningTrue(s) : (stuck ?? notRunning(s, phase));
  condition(s, ctx, input);
  warnOnInternalError(s, input, deps);
}

/** A launcher pod whose containers are being created (the kubelet is still attaching and mounting its volumes). */
function isContainerCreating(pod: Pod): boolean {
  return pod.status?.phase === 'Pending' && (pod.status.containerStatuses ?? []).some((c) => c.state?.waiting?.reason === 'ContainerCreating');
}

/**
 * While a launcher pod of the VM is being created, as the original: when a volume cannot be attached
 * or mounted (the pod's latest event is FailedAttachVolume or FailedMount), Running False
 * `PodVolumeErrors`, `Volume errors detected on Pod: <reason>: <message>`; else, when it is the VM's
 * only pod, `PodContainerCreating`. The events are read from the apiserver (the original caches them);
 * one that cannot be read is left out, as the original does. Undefined when no pod is being created.
 */
async function podBeingCreated(s: VMState, deps: Deps, ctx: HandlerContext): Promise<{ condition?: ConditionInput } | undefined> {
  const pods = podsOfVM(deps.caches.pods, s.obj);
  const creating = pods.filter(isContainerCreating);
  if (creating.length === 0) return undefined;
  for (const pod of creating) {
    const error = await deps.launcher.volumeError(pod, ctx.signal).catch((err: unknown) => {
      ctx.log.debug({ err, pod: pod.metadata.name }, 'cannot read the events of a launcher pod');
      return undefined;
    });
    if (error !== undefined) {
      return { condition: { type: Running.type, status: 'False', reason: Running.reason.PodVolumeErrors, message: `Volume errors detected on Pod: ${error}` } };
    }
  }
  if (pods.length > 1) return {};
  return {
    condition: {
      type: Running.type,
      status: 'False',
      reason: Running.reason.PodContainerCreating,
      message: 'Pod is in ContainerCreating phase. Check the pod for more details.',
    },
  };
}

/**
 * As the original, an internal virtual machine error is also a Warning event on the VM; once per
 * change into it (the original records one on every pass, which its recorder folds into a series).
 */
function warnOnInternalError(s: VMState, input: ConditionInput, deps: Deps): void {
  const reason = Running.reason.InternalVirtualMachineError;
  if (input.reason !== reason) return;
  const before = s.obj.status?.conditions?.find((c) => c.type === Running.type);
  if (before?.reason === reason && before.message === input.message) return;
  void deps.events.record(s.obj, { type: 'Warning', reason, action: 'Start', note: input.message });
}

function runningTrue(s: VMState): ConditionInput {
  const boot = s.kvvmi?.status?.conditions?.find((c) => c.type === GUEST_BOOTABLE_CONDITION);
  if (boot?.status === 'False' && boot.reason === NO_BOOTABLE_DEVICE_REASON) {
    // The original's Running condition stays True: the domain runs, its firmware found nothing to boot.
    return { type: Running.type, status: 'True', reason: Running.reason.NoBootableDevice, message: boot.message ?? 'No bootable device.' };
  }
  return { type: Running.type, status: 'True', reason: Running.reason.Running };
}

function notRunning(s: VMState, phase: VMPhase): ConditionInput {
  const failed = s.kvvmi?.status?.phase === 'Failed';
  const message =
    s.kvvm === undefined && s.waitingFor.length > 0
      ? `waiting for: ${s.waitingFor.join('; ')}`
      : failed
        ? 'the guest failed'
        : `the virtual machine is ${phase.toLowerCase()}`;
  const reason = failed ? Running.reason.InternalVirtualMachineError : Running.reason.NotRunning;
  return { type: Running.type, status: 'False', reason, message };
}

/**
 * Why KubeVirt could not start a VM not running yet; the one place that decides it. As the original:
 * a launcher pod that says why it is not running (its status reason and message, as a kubelet or an
 * eviction writes them) or that the scheduler cannot place (`PodScheduled=False`, the instance's or
 * else the pod's own: its reason and the scheduler's message) is PodNotStarted, `<reason>: <message>`; a launcher pod KubeVirt could not create (the instance's `Synchronized=False` `FailedCreate`) or that
 * could not start (printable status ErrImagePull, ImagePullBackOff, CrashLoopBackOff,
 * ErrorUnschedulable, DataVolumeError, ErrorPvcNotFound) is PodNotStarted; printable status Unknown is
 * InternalVirtualMachineError. Their message: `<lead>: <printable status>[, <instance phase>][;
 * <Synchronized reason>: <message>]`. Any other `Synchronized=False` (the node cannot start the
 * domain: InsufficientHostMemory) is our choice, as the original shows none: the instance's reason
 * and message; NotRunning, the reason leading the message, when the reason is prose (KubeVirt's
 * default `Synchronizing with the Domain failed.`).
 */
function startFailureCondition(s: VMState, pod: Pod | undefined): ConditionInput | undefined {
  if (s.kvvm === undefined) return undefined;
  const told = pod?.status?.message ? pod.status : unscheduledOf(s.kvvmi, pod);
  if (told?.message) {
    return {
      type: Running.type,
      status: 'False',
      reason: Running.reason.PodNotStarted,
      message: told.reason ? `${told.reason}: ${told.message}` : told.message,
    };
  }
  const printable = printableStatusOf(s.kvvm, s.kvvmi);
  const failure = syncFailureOf(s.kvvmi);
  const reason = failure?.reason ?? '';
  const message = failure?.message ?? '';
  const detail = (lead: string): string => {
    const vmiPhase = s.kvvmi === undefined ? '' : `, ${s.kvvmi.status?.phase ?? ''}`;
    const sync = failure === undefined || message === '' ? '' : `; ${reason}: ${message}`;
    return `${lead}: ${printable}${vmiPhase}${sync}`;
  };
  if (reason === FAILED_CREATE_REASON || POD_NOT_STARTED_STATUSES.has(printable)) {
    return { type: Running.type, status: 'False', reason: Running.reason.PodNotStarted, message: detail('Failed to start pod') };
  }
  if (printable === UNKNOWN_STATUS) {
    return { type: Running.type, status: 'False', reason: Running.reason.InternalVirtualMachineError, message: detail('Internal virtual machine error') };
  }
  if (failure === undefined) return undefined;
  if (isConditionReason(reason)) return { type: Running.type, status: 'False', reason, message };
  const lead = reason.replace(/\.$/, '');
  const text = lead === '' ? message : message === '' ? lead : `${lead}: ${message}`;
  return { type: Running.type, status: 'False', reason: Running.reason.NotRunning, message: text };
}

function resourcesOf(s: VMState): VMStatus['resources'] {
  const { cores } = s.obj.spec.cpu;
  const fraction = effectiveCoreFraction(s.obj, s.vmClass);
  const topology = topologyOf(cores);
  return {
    cpu: {
      cores,
      coreFraction: `${fraction}%`,
      requestedCores: requestedCpu(cores, fraction),
      topology: { sockets: topology.sockets, coresPerSocket: topology.coresPerSocket },
    },
    memory: { size: s.obj.spec.memory.size },
  };
}

function migrationStateOf(vmi: InternalVirtualMachineInstance | undefined): VMStatus['migrationState'] {
  const m = vmi?.status?.migrationState;
  if (m === undefined || m.startTimestamp == null) return undefined;
  const result = m.failed === true ? 'Failed' : m.completed === true ? 'Succeeded' : '';
  return {
    startTimestamp: m.startTimestamp,
    ...(m.endTimestamp != null ? { endTimestamp: m.endTimestamp } : {}),
    source: { node: m.sourceNode, pod: m.sourcePod },
    target: { node: m.targetNode, pod: m.targetPod },
    result,
  };
}
