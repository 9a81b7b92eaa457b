import { VMOPCondition } from '../../../../shared/api/conditions/index.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import { supersedes } from '../../../../shared/api/vmop-supersede.js';
import { conditionalMergePatch, objectKey } from '../../../../shared/kube/index.js';
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
  const kvvm = deps.caches.kvvms.get(objectKey({ namespace: old.metadata.namespace, name: old.spec.virtualMachineName }));
  await operations[old.spec.type]?.cleanup({ deps, vmop: marked, kvvm, signal: ctx.signal });
  ctx.log.info({ superseded: old.metadata.name, type: old.spec.type }, 'older operation superseded');
}
