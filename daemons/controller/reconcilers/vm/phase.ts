import { FAILED_CREATE_REASON, SYNCHRONIZED_CONDITION } from '../../../../shared/api/internal/launcher.js';
import type { KubeVirtCondition } from '../../../../shared/api/internal/kubevirt.js';
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { Pod } from '../../kube/resources.js';

/** The pod condition virt-controller copies onto an instance whose launcher pod is not scheduled. */
export const POD_SCHEDULED_CONDITION = 'PodScheduled';

export type VMPhase = NonNullable<NonNullable<VirtualMachine['status']>['phase']>;

/**
 * KubeVirt printable statuses (v1.6 spelling) of a launcher pod that could not start: the original's
 * `isPodStartedError`, shown as the Running condition's PodNotStarted.
 */
export const POD_NOT_STARTED_STATUSES: ReadonlySet<string> = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'CrashLoopBackOff',
  'ErrorUnschedulable',
  'DataVolumeError',
  'ErrorPvcNotFound',
]);
/** KubeVirt could not tell the VM's state: the original's InternalVirtualMachineError. */
export const UNKNOWN_STATUS = 'Unknown';

/** KubeVirt printable statuses that mean "cannot start yet": the VM stays Pending. */
const PENDING_STATUSES: ReadonlySet<string> = new Set([...POD_NOT_STARTED_STATUSES, UNKNOWN_STATUS, 'WaitingForVolumeBinding']);

/** printableStatus → phase, as the original maps it (an unknown or empty status is Pending). */
const BY_PRINTABLE: Record<string, VMPhase> = {
  Stopped: 'Stopped',
  Provisioning: 'Starting',
  Starting: 'Starting',
  Running: 'Running',
  Paused: 'Pause',
  Stopping: 'Stopping',
  Terminating: 'Terminating',
  Migrating: 'Migrating',
  WaitingForReceiver: 'Migrating',
};

export interface PhaseInput {
  deleting: boolean;
  kvvm: InternalVirtualMachine | undefined;
  kvvmi: InternalVirtualMachineInstance | undefined;
  /** A start is due (AlwaysOn, a first start, a requested start): a stopped VM shows Pending. */
  startPending: boolean;
  /** The instance's launcher pod (its active one), when there is one. */
  pod?: Pod | undefined;
}

/**
 * The VM phase. The printable status KubeVirt derives is recomputed here from the instance itself
 * (the freshest truth), and the internal VM's printableStatus is used for what only it knows (why a
 * start is stuck).
 */
export function phaseOf(input: PhaseInput): VMPhase {
  if (input.deleting) return 'Terminating';
  if (input.kvvm === undefined) return 'Pending';
  // As the original: a launcher pod the scheduler cannot place keeps the VM Pending, whatever the printable status says yet.
  if (unscheduledOf(input.kvvmi, input.pod) !== undefined) return 'Pending';
  const printable = printableStatusOf(input.kvvm, input.kvvmi);
  if (PENDING_STATUSES.has(printable) || printable === '') return 'Pending';
  const phase = BY_PRINTABLE[printable] ?? 'Pending';
  if (phase === 'Stopped' && input.startPending) return 'Pending';
  // As the original: a start whose launcher pod KubeVirt could not create has not left Pending.
  if (phase === 'Starting' && syncFailureOf(input.kvvmi)?.reason === FAILED_CREATE_REASON) return 'Pending';
  return phase;
}

/** The instance's `Synchronized=False` condition: KubeVirt could not create its pod or start its domain. */
export function syncFailureOf(vmi: InternalVirtualMachineInstance | undefined): KubeVirtCondition | undefined {
  return vmi?.status?.conditions?.find((c) => c.type === SYNCHRONIZED_CONDITION && c.status === 'False');
}

/**
 * Why the scheduler has not placed the instance's launcher pod, while the instance is still waiting
 * for it: the instance's `PodScheduled=False` (virt-controller copies it from the pod: reason
 * `Unschedulable`, the scheduler's message), else the launcher pod's own. The original reads the
 * internal VM's copy; the pod is the source of every copy, and virt-controller v1.6 cannot always make
 * one: on Kubernetes 1.37 its patch of such a pod's conditions is refused (they carry
 * `observedGeneration`, which its Go types drop), and the instance stays Pending without the condition.
 */
export function unscheduledOf(vmi: InternalVirtualMachineInstance | undefined, pod?: Pod): KubeVirtCondition | undefined {
  if (vmi === undefined || vmi.metadata.deletionTimestamp !== undefined) return undefined;
  const phase = vmi.status?.phase ?? '';
  if (phase !== '' && phase !== 'Pending' && phase !== 'Scheduling') return undefined;
  const notScheduled = (c: { type: string; status: string }): boolean => c.type === POD_SCHEDULED_CONDITION && c.status === 'False';
  return vmi.status?.conditions?.find(notScheduled) ?? pod?.status?.conditions?.find(notScheduled);
}

/** KubeVirt's printable status of a VM from its instance (and the VM's own status when it has none). */
export function printableStatusOf(kvvm: InternalVirtualMachine, vmi: InternalVirtualMachineInstance | undefined): string {
  const reported = kvvm.status?.printableStatus ?? '';
  if (vmi === undefined) return PENDING_STATUSES.has(reported) ? reported : 'Stopped';
  if (vmi.metadata.deletionTimestamp !== undefined) return 'Stopping';
  const phase = vmi.status?.phase ?? '';
  if (phase === 'Running') {
    if (isMigrating(vmi)) return 'Migrating';
    return hasTrueCondition(vmi, 'Paused') ? 'Paused' : 'Running';
  }
  if (phase === 'Succeeded' || phase === 'Failed') return 'Stopped';
  if (PENDING_STATUSES.has(reported)) return reported;
  return 'Starting';
}

/** A live migration has started and not ended. */
export function isMigrating(vmi: InternalVirtualMachineInstance): boolean {
  const state = vmi.status?.migrationState;
  return state !== undefined && state.startTimestamp != null && state.completed !== true && state.failed !== true;
}

function hasTrueCondition(vmi: InternalVirtualMachineInstance, type: string): boolean {
  return vmi.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
}
