/** runPolicy semantics: what the controller does to the internal VM/VMI, as a pure decision. */

export type RunPolicy = 'AlwaysOn' | 'AlwaysOff' | 'Manual' | 'AlwaysOnUnlessStoppedManually';
/** Why an instance ended, from the launcher's termination message (undefined: not known). */
export type GuestEvent = 'guest-shutdown' | 'guest-reset' | undefined;

export interface PowerInput {
  runPolicy: RunPolicy;
  /** The instance, if one exists. */
  vmi?: { uid: string; phase: string; deleting: boolean } | undefined;
  /** For a Succeeded instance: what the guest did. */
  guestEvent?: GuestEvent;
  /** A Start operation asked for a start. */
  startRequested: boolean;
  /** A Restart operation asked for a restart of this instance uid. */
  restartRequestedFor?: string | undefined;
  /** Start/stop requests KubeVirt has not processed yet: wait for them. */
  requestsPending: boolean;
  /** The internal VM is still on runStrategy Always (first start of AlwaysOnUnlessStoppedManually). */
  kubevirtStarts: boolean;
}

export type PowerAction = { kind: 'none' } | { kind: 'start'; why: string } | { kind: 'stop'; why: string } | { kind: 'restart'; why: string };

const none: PowerAction = { kind: 'none' };

/**
 * The power action for a VM:
 * - AlwaysOff: stop any instance.
 * - AlwaysOn: start when there is none; restart after any end of the guest (shutdown, reset, failure).
 * - Manual: start only on request; guest reset restarts, guest shutdown (or failure) stops.
 * - AlwaysOnUnlessStoppedManually: KubeVirt does the first start; a guest reset or failure restarts, a guest
 *   shutdown stops and it stays off; an instance that ended for another reason (pod deleted or evicted)
 *   restarts. Requested restarts apply to every policy but AlwaysOff.
 */
export function decidePower(input: PowerInput): PowerAction {
  if (input.requestsPending) return none;
  const { vmi, runPolicy } = input;
  if (runPolicy === 'AlwaysOff') return vmi !== undefined && !vmi.deleting ? { kind: 'stop', why: 'runPolicy AlwaysOff' } : none;
  if (vmi === undefined) return startWhenStopped(input);
  if (vmi.deleting) return none;
  if (vmi.phase === 'Succeeded' || vmi.phase === 'Failed') return afterGuestEnded(input, vmi.phase);
  if (input.restartRequestedFor !== undefined && input.restartRequestedFor === vmi.uid) return { kind: 'restart', why: 'restart requested' };
  return none;
}

function startWhenStopped(input: PowerInput): PowerAction {
  if (input.runPolicy === 'AlwaysOn') return { kind: 'start', why: 'runPolicy AlwaysOn' };
  if (input.startRequested) return { kind: 'start', why: 'start requested' };
  if (input.restartRequestedFor !== undefined) return { kind: 'start', why: 'restart requested' };
  return none;
}

function afterGuestEnded(input: PowerInput, phase: 'Succeeded' | 'Failed'): PowerAction {
  const event = phase === 'Failed' ? 'failure' : (input.guestEvent ?? 'ended');
  const why = `instance ${phase}: ${event}`;
  switch (input.runPolicy) {
    case 'AlwaysOn':
      return { kind: 'restart', why };
    case 'Manual':
      return event === 'guest-reset' ? { kind: 'restart', why } : { kind: 'stop', why };
    case 'AlwaysOnUnlessStoppedManually':
      return event === 'guest-shutdown' ? { kind: 'stop', why } : { kind: 'restart', why };
    default:
      return none;
  }
}

/** The runStrategy of the internal VM: Always only until KubeVirt made the first start. */
export function runStrategyFor(input: {
  runPolicy: RunPolicy;
  kvvmExists: boolean;
  currentRunStrategy: string | undefined;
  vmiExists: boolean;
  previousRunPolicy: RunPolicy | undefined;
}): 'Always' | 'Manual' {
  if (input.runPolicy !== 'AlwaysOnUnlessStoppedManually') return 'Manual';
  if (!input.kvvmExists) return 'Always';
  if (input.previousRunPolicy === 'AlwaysOff' && !input.vmiExists) return 'Always';
  return input.currentRunStrategy === 'Always' && !input.vmiExists ? 'Always' : 'Manual';
}

/** What the guest did, from the compute container's termination message. */
export function parseGuestEvent(message: string | undefined): GuestEvent {
  if (message === undefined) return undefined;
  if (message.includes('guest-reset')) return 'guest-reset';
  if (message.includes('guest-shutdown')) return 'guest-shutdown';
  return undefined;
}
