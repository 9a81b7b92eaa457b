/**
 * VirtualMachineSnapshotOperation CreateVirtualMachine: a new VM and disks from a Ready
 * VirtualMachineSnapshot, named by createVirtualMachine's rules (as a Clone), the objects annotated
 * `virtualization.deckhouse.io/vmsopcreated=<operation uid>`. Pending (waiting for the snapshot to be
 * Ready) → InProgress → Completed when the new disks are Ready, or Failed: the snapshot is missing
 * (VirtualMachineSnapshotNotFound) or failed, a name is taken (nothing is overwritten), a broken
 * snapshot Secret. DryRun only lists the names. `vmsop-cleanup` while it runs.
 */
import { VMSOPCondition } from '../../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../../shared/api/finalizers.js';
import type { VirtualMachineSnapshotOperation } from '../../../../../shared/api/resources/snapshots.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../../../../shared/kube/index.js';
import { conditionOn } from '../../../engine/conditions.js';
import { clone, type Handler, type HandlerContext, type HandlerOutcome, type ReconcileState } from '../../../engine/reconciler.js';
import type { ReconcileFn } from '../../../engine/runner.js';
import type { Progress } from '../../vmop/operation.js';
import { readCaptured } from '../captured.js';
import { createFromCaptured, dryRun, type Target } from '../clone.js';
import type { SnapshotDeps } from '../deps.js';
import { snapshotChain } from '../parts.js';

type Status = NonNullable<VirtualMachineSnapshotOperation['status']>;
type VMSOPState = ReconcileState<VirtualMachineSnapshotOperation, Status>;

/** The annotation on what a CreateVirtualMachine operation made: its uid. */
export const CREATED_BY = 'virtualization.deckhouse.io/vmsopcreated';
/** `VirtualMachineSnapshotOperation` cache index: `<ns>/<snapshot name>`. */
export const VMSOP_BY_SNAPSHOT = 'vmsop-by-snapshot';

const C = VMSOPCondition.Completed;
const FINAL = new Set(['Completed', 'Failed']);

export function vmsopReconciler(d: SnapshotDeps): ReconcileFn {
  const cache = d.snapshots.caches.vmsops;
  return snapshotChain<VirtualMachineSnapshotOperation, Status, VMSOPState>(cache, d.snapshots.clients.vmsops, {
    name: 'vmsop',
    init: (op) => ({ obj: op, status: clone(op.status) ?? { phase: 'Pending' } }),
    handlers: [deletion(d), lifecycle(), execute(d)],
  });
}

/** `vmsop-cleanup` is held while it runs; a deleted or finished one lets go (what it made stays). */
function deletion(d: SnapshotDeps): Handler<VMSOPState> {
  return {
    name: 'deletion',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const op = s.obj;
      const deleting = op.metadata.deletionTimestamp !== undefined;
      if (!deleting && !FINAL.has(op.status?.phase ?? '')) return;
      if (hasFinalizer(op, Finalizer.vmsopCleanup)) {
        d.snapshots.caches.vmsops.remember(await removeFinalizer(d.snapshots.clients.vmsops, op, Finalizer.vmsopCleanup, { signal: ctx.signal }));
      }
      if (deleting) {
        s.status.phase = 'Terminating';
        s.gone = true;
      }
      return { stop: true };
    },
  };
}

function lifecycle(): Handler<VMSOPState> {
  return {
    name: 'lifecycle',
    handle(s, ctx): void {
      s.status.observedGeneration = s.obj.metadata.generation;
      if (s.obj.status === undefined)
        conditionOn(s, ctx, { type: C.type, status: 'Unknown', reason: C.reason.NotReadyToBeExecuted, message: 'waiting to be executed' });
    },
  };
}

function finish(
  s: VMSOPState,
  ctx: HandlerContext,
  progress: Exclude<Progress, { state: 'waiting' }>,
  failReason: string = C.reason.OperationFailed,
): HandlerOutcome {
  if (progress.resources !== undefined) s.status.resources = progress.resources.map((r) => ({ ...r, message: r.message ?? '' }));
  if (progress.state === 'failed') {
    s.status.phase = 'Failed';
    conditionOn(s, ctx, { type: C.type, status: 'False', reason: failReason, message: progress.message });
  } else {
    s.status.phase = 'Completed';
    conditionOn(s, ctx, { type: C.type, status: 'True', reason: C.reason.OperationCompleted });
  }
  return { stop: true };
}

function execute(d: SnapshotDeps): Handler<VMSOPState> {
  return {
    name: 'execute',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const op = s.obj;
      if (!hasFinalizer(op, Finalizer.vmsopCleanup)) {
        d.snapshots.caches.vmsops.remember(await addFinalizer(d.snapshots.clients.vmsops, op, Finalizer.vmsopCleanup, { signal: ctx.signal }));
      }
      const ns = op.metadata.namespace ?? '';
      const name = op.spec.virtualMachineSnapshotName;
      const spec = op.spec.createVirtualMachine;
      if (spec === undefined) return finish(s, ctx, { state: 'failed', message: 'CreateVirtualMachine requires the createVirtualMachine field' });
      if (d.snapshots.caches.vmSnapshots.get(`${ns}/${name}`) === undefined) {
        return finish(s, ctx, { state: 'failed', message: `VirtualMachineSnapshot ${name} does not exist` }, C.reason.VirtualMachineSnapshotNotFound);
      }
      const got = await readCaptured(d, ns, name, ctx.signal);
      if (!got.ok && got.waiting) {
        conditionOn(s, ctx, { type: C.type, status: 'False', reason: C.reason.NotReadyToBeExecuted, message: got.message });
        return { stop: true, requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
      }
      if (!got.ok) return finish(s, ctx, { state: 'failed', message: got.message });
      const target: Target = { namespace: ns, tag: { [CREATED_BY]: op.metadata.uid ?? '' }, spec };
      const progress =
        spec.mode === 'DryRun'
          ? dryRun(d, target, got.captured.vm)
          : await createFromCaptured(d, target, got.captured, C.reason.CreateVirtualMachineInProgress, ctx.signal);
      if (progress.state !== 'waiting') return finish(s, ctx, progress);
      s.status.phase = 'InProgress';
      if (progress.resources !== undefined) s.status.resources = progress.resources.map((r) => ({ ...r, message: r.message ?? '' }));
      conditionOn(s, ctx, { type: C.type, status: 'False', reason: progress.reason, message: progress.message ?? '' });
      return { stop: true, requeueAfterMs: progress.recheckMs };
    },
  };
}
