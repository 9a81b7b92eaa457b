/** The `attached` handler that IP and MAC addresses share: Attached while a VM uses the address. */
import { VMIPCondition } from '../../../shared/api/conditions/index.js';
import { conditionOn } from '../engine/conditions.js';
import type { Handler } from '../engine/reconciler.js';

const Attached = VMIPCondition.Attached;

interface AddressState {
  readonly obj: { metadata: { generation?: number | undefined } };
  status: {
    conditions?: Parameters<typeof conditionOn>[0]['status']['conditions'];
    observedGeneration?: number | undefined;
    virtualMachineName?: string | undefined;
    phase?: string | undefined;
  };
}

/** Attached while `userOf` names a VM using the address (status.virtualMachineName; a Bound address becomes Attached). */
export function attachedHandler<S extends AddressState>(userOf: (s: S) => string | undefined): Handler<S> {
  return {
    name: 'attached',
    handle(s, ctx): void {
      if (s.obj.metadata.generation !== undefined) s.status.observedGeneration = s.obj.metadata.generation;
      const user = userOf(s);
      if (user !== undefined) {
        s.status.virtualMachineName = user;
        if (s.status.phase === 'Bound') s.status.phase = 'Attached';
        conditionOn(s, ctx, { type: Attached.type, status: 'True', reason: Attached.reason.Attached });
        return;
      }
      delete s.status.virtualMachineName;
      conditionOn(s, ctx, {
        type: Attached.type,
        status: 'False',
        reason: Attached.reason.VirtualMachineNotFound,
        message: 'no VirtualMachine uses this address',
      });
    },
  };
}
