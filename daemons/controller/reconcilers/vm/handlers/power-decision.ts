import type { Deps } from '../../../deps.js';
import type { Expectations } from '../../../engine/expectations.js';
import type { Handler } from '../../../engine/reconciler.js';
import { decidePower, type GuestEvent } from '../power.js';
import type { VMState } from '../state.js';

/** Internal VM annotations through which operations ask for a start or a restart. */
export const START_REQUESTED = 'virtualization.deckhouse.io/vm-start-requested';
/** Value: the uid of the instance to restart. */
export const RESTART_REQUESTED = 'virtualization.deckhouse.io/vm-restart-requested';

/**
 * Decides the power action from runPolicy, the instance, how the guest ended and the operations'
 * requests (pure decision in power.ts); executing it is the powerState handler's job, after syncKvvm
 * has applied pending configuration to a VM about to (re)start.
 */
export function powerDecisionHandler(deps: Deps, restarts: Expectations<string>): Handler<VMState> {
  return {
    name: 'powerDecision',
    async handle(s, ctx): Promise<void> {
      const kvvm = deps.caches.kvvms.get(s.key);
      const kvvmi = deps.caches.kvvmis.get(s.key);
      s.kvvm = kvvm;
      s.kvvmi = kvvmi;
      const runPolicy = s.obj.spec.runPolicy;
      if (kvvm === undefined) {
        s.startPending = runPolicy === 'AlwaysOn' || runPolicy === 'AlwaysOnUnlessStoppedManually';
        return;
      }
      const annotations = kvvm.metadata.annotations ?? {};
      const phase = kvvmi?.status?.phase ?? '';
      const guestEvent: GuestEvent = kvvmi !== undefined && phase === 'Succeeded' ? await deps.launcher.guestEvent(kvvmi, ctx.signal) : undefined;
      const vmi = kvvmi === undefined ? undefined : { uid: kvvmi.metadata.uid ?? '', phase, deleting: kvvmi.metadata.deletionTimestamp !== undefined };
      let power = decidePower({
        runPolicy,
        vmi,
        guestEvent,
        startRequested: annotations[START_REQUESTED] !== undefined,
        restartRequestedFor: annotations[RESTART_REQUESTED],
        requestsPending: (kvvm.status?.stateChangeRequests ?? []).length > 0,
        kubevirtStarts: kvvm.spec.runStrategy === 'Always',
      });
      if (power.kind === 'restart' && vmi !== undefined && restarts.get(s.key) === vmi.uid) power = { kind: 'none' };
      s.power = power;
      s.startPending = power.kind === 'start' || (kvvmi === undefined && (kvvm.spec.runStrategy === 'Always' || annotations[START_REQUESTED] !== undefined));
    },
  };
}
