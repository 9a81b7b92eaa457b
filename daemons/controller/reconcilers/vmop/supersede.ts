import { VMOPCondition } from '../../../../shared/api/conditions/index.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import { supersedes } from '../../../../shared/api/vmop-supersede.js';
import { ConflictError, NotFoundError } from '../../../../shared/errors/index.js';
import { conditionalMergePatch } from '../../../../shared/kube/index.js';
import type { Deps } from '../../deps.js';
import { setCondition } from '../../engine/conditions.js';
import type { HandlerContext } from '../../engine/reconciler.js';
import type { Operations } from './handlers.js';

/** Whether `incoming` takes the place of every operation in `ahead` (all older than it, each one it may supersede). */
export function supersedesAll(
  ahead: readonly VirtualMachineOperation[],
  incoming: VirtualMachineOperation,
  older: (o: VirtualMachineOperation) => boolean,
): boolean {
  return ahead.length > 0 && ahead.every((o) => older(o) && supersedes(o.spec, incoming.spec));
}

/**
 * Mark an older unfinished operation Superseded and withdraw what it asked for (its start or restart
 * request, its migration); the mark is made on condition that it is still the version this pass looked at: one that
 * finished meanwhile makes the write conflict, and the next pass finds it finished and leaves it be.
 */
export async function supersede(
  deps: Deps,
  operations: Operations,
  old: VirtualMachineOperation,
  by: VirtualMachineOperation,
  ctx: HandlerContext,
): Promise<void> {
  const conditions = setCondition(
    old.status?.conditions,
    {
      type: VMOPCondition.Completed.type,
      status: 'False',
      reason: VMOPCondition.Completed.reason.Superseded,
      message: `Superseded by ${by.metadata.name ?? ''} with type ${by.spec.type}`,
    },
    ctx.now,
    old.metadata.generation,
  );
  const ref = { namespace: old.metadata.namespace, name: old.metadata.name ?? '' };
  const body = conditionalMergePatch({ status: { phase: 'Superseded', conditions } }, old.metadata.resourceVersion);
  const marked = deps.caches.vmops.remember(await deps.clients.vmops.mergePatch(ref, body, { subresource: 'status', signal: ctx.signal }));
  // Marked first, withdrawn second: the older operation's own pass then never sees its migration gone
  // while it still counts as running (it would fail it). A migration's withdrawal cut short here is
  // finished by the deletion handler before it drops the Superseded operation's finalizer.
  await withdraw(deps, operations, marked, ctx);
  ctx.log.info({ superseded: old.metadata.name, type: old.spec.type }, 'older operation superseded');
}

const WITHDRAW_ATTEMPTS = 5;

/**
 * Withdraw what a just-superseded operation asked for, on the internal VM as the apiserver has it:
 * once marked Superseded the operation is final, so no later pass withdraws its start or restart
 * marker (a shared annotation must not be withdrawn twice). A cached copy may not show a marker
 * written a moment ago, or be a version behind (the conditional write conflicts); either would leave
 * the marker, and the VM would start again after the newer Stop (seen under load in the demo).
 */
async function withdraw(deps: Deps, operations: Operations, vmop: VirtualMachineOperation, ctx: HandlerContext): Promise<void> {
  const operation = operations[vmop.spec.type];
  if (operation === undefined) return;
  const ref = { namespace: vmop.metadata.namespace, name: vmop.spec.virtualMachineName };
  for (let attempt = 1; ; attempt++) {
    const kvvm = await deps.clients.kvvms.get(ref, { signal: ctx.signal }).catch((err: unknown) => {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    });
    try {
      await operation.cleanup({ deps, vmop, kvvm, signal: ctx.signal });
      return;
    } catch (err: unknown) {
      if (!(err instanceof ConflictError) || attempt >= WITHDRAW_ATTEMPTS) throw err;
    }
  }
}
