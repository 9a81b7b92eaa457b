import { VMOPCondition } from '../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../shared/api/finalizers.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import { addFinalizer, hasFinalizer, removeFinalizer, objectKey } from '../../../../shared/kube/index.js';
import type { Deps } from '../../deps.js';
import { conditionOn } from '../../engine/conditions.js';
import type { Handler, HandlerContext, HandlerOutcome, ReconcileState } from '../../engine/reconciler.js';
import { applicability } from './applicability.js';
import { migrateOperation } from './migrate-ops.js';
import type { Operation } from './operation.js';
import { restartOperation, startOperation, stopOperation } from './power-ops.js';
import { supersede, supersedesAll } from './supersede.js';

export type VMOPStatus = NonNullable<VirtualMachineOperation['status']>;
export interface VMOPState extends ReconcileState<VirtualMachineOperation, VMOPStatus> {
  vm?: VirtualMachine;
}

const Completed = VMOPCondition.Completed;
const SignalSent = VMOPCondition.SignalSent;
const FINAL = new Set(['Completed', 'Failed', 'Superseded']);
/** Index on the VMOP cache: `namespace/vmName`. */
export const VMOP_BY_VM = 'vm';

/** Which Operation runs a type; types without one are left to another reconciler (Restore and Clone: reconcilers/snapshot). */
export type Operations = Partial<Record<string, Operation>>;

export const OPERATIONS: Operations = {
  Start: startOperation,
  Stop: stopOperation,
  Restart: restartOperation,
  Migrate: migrateOperation,
  Evict: migrateOperation,
};

function fail(s: VMOPState, ctx: HandlerContext, reason: string, message: string): HandlerOutcome {
  s.status.phase = 'Failed';
  conditionOn(s, ctx, { type: Completed.type, status: 'False', reason, message });
  return { stop: true };
}

const vmKey = (vmop: VirtualMachineOperation): string => objectKey({ namespace: vmop.metadata.namespace, name: vmop.spec.virtualMachineName });

function opContext(deps: Deps, s: VMOPState, ctx: HandlerContext, vm: VirtualMachine): Parameters<Operation['check']>[0] {
  const key = vmKey(s.obj);
  return { deps, vmop: s.obj, vm, kvvm: deps.caches.kvvms.get(key), kvvmi: deps.caches.kvvmis.get(key), signal: ctx.signal, log: ctx.log };
}

/** A deleting or superseded operation undoes its markers (cancels a migration) and lets go; a finished one drops its finalizer. */
export function deletion(deps: Deps, operations: Operations = OPERATIONS): Handler<VMOPState> {
  return {
    name: 'deletion',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const vmop = s.obj;
      const deleting = vmop.metadata.deletionTimestamp !== undefined;
      if (!deleting && !FINAL.has(vmop.status?.phase ?? '')) return;
      if (!hasFinalizer(vmop, Finalizer.vmopCleanup)) return deleting ? { stop: true } : undefined;
      const running = !FINAL.has(vmop.status?.phase ?? '');
      const op = operations[vmop.spec.type];
      // A superseded operation's withdrawal of its own objects (supersede.ts) is finished here if it was cut short.
      if ((deleting && running) || (vmop.status?.phase === 'Superseded' && op?.cleansOwnObjectsOnly === true)) {
        const done = (await op?.cleanup({ deps, vmop, kvvm: deps.caches.kvvms.get(vmKey(vmop)), signal: ctx.signal })) ?? true;
        if (running) s.status.phase = 'Terminating';
        if (!done) return { stop: true };
      }
      deps.caches.vmops.remember(await removeFinalizer(deps.clients.vmops, vmop, Finalizer.vmopCleanup, { signal: ctx.signal }));
      if (deleting) s.gone = true;
      return { stop: true };
    },
  };
}

/** A new operation becomes Pending; a finished one is left alone. */
export function lifecycle(): Handler<VMOPState> {
  return {
    name: 'lifecycle',
    handle(s, ctx): HandlerOutcome | void {
      if (FINAL.has(s.status.phase ?? '')) return { stop: true };
      if (s.status.phase === undefined) {
        s.status.phase = 'Pending';
        conditionOn(s, ctx, { type: Completed.type, status: 'Unknown', reason: Completed.reason.NotReadyToBeExecuted, message: 'waiting to be executed' });
      }
    },
  };
}

/** The operation's VM must exist. */
export function targetVM(deps: Deps): Handler<VMOPState> {
  return {
    name: 'virtualMachine',
    handle(s, ctx): HandlerOutcome | void {
      const vm = deps.caches.vms.get(vmKey(s.obj));
      if (vm === undefined) return fail(s, ctx, Completed.reason.VirtualMachineNotFound, `VirtualMachine ${s.obj.spec.virtualMachineName} not found`);
      s.vm = vm;
    },
  };
}

/**
 * One active operation per VM: a Pending one waits while an older unfinished one exists, unless it may
 * take the place of every such one (supersede.ts): then they are withdrawn and marked Superseded.
 */
export function exclusive(deps: Deps, operations: Operations = OPERATIONS): Handler<VMOPState> {
  return {
    name: 'exclusive',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      if (s.status.phase !== 'Pending') return;
      const ahead = deps.caches.vmops
        .byIndex(VMOP_BY_VM, vmKey(s.obj))
        .filter((o) => o.metadata.uid !== s.obj.metadata.uid && !FINAL.has(o.status?.phase ?? '') && o.metadata.deletionTimestamp === undefined)
        .filter((o) => o.status?.phase === 'InProgress' || olderThan(o, s.obj));
      if (ahead.length === 0) return;
      if (supersedesAll(ahead, s.obj, (o) => olderThan(o, s.obj))) {
        for (const old of ahead) await supersede(deps, operations, old, s.obj, ctx);
        return;
      }
      const names = ahead.map((o) => o.metadata.name).join(', ');
      conditionOn(s, ctx, {
        type: Completed.type,
        status: 'False',
        reason: Completed.reason.NotReadyToBeExecuted,
        message: `waiting for operation ${names} on the same VM`,
      });
      return { stop: true };
    },
  };
}

function olderThan(a: VirtualMachineOperation, b: VirtualMachineOperation): boolean {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  return ta < tb || (ta === tb && (a.metadata.name ?? '') < (b.metadata.name ?? ''));
}

/** A Pending operation must be applicable to the VM's phase and runPolicy, else it fails. */
export function applicable(): Handler<VMOPState> {
  return {
    name: 'applicability',
    handle(s, ctx): HandlerOutcome | void {
      if (s.status.phase !== 'Pending' || s.vm === undefined) return;
      const vm = s.vm;
      const verdict = applicability({
        type: s.obj.spec.type,
        force: s.obj.spec.force,
        phase: vm.status?.phase,
        runPolicy: vm.spec.runPolicy,
        liveMigrationPolicy: vm.spec.liveMigrationPolicy,
      });
      if (!verdict.ok) return fail(s, ctx, verdict.reason, verdict.message);
    },
  };
}

/** Sends the signal once (Pending → InProgress), then follows it to Completed or Failed. */
export function execute(deps: Deps, operations: Operations = OPERATIONS): Handler<VMOPState> {
  return {
    name: 'execute',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const op = operations[s.obj.spec.type];
      if (s.vm === undefined) return;
      if (op === undefined) {
        // Restore and Clone run in the snapshot reconcilers, which run with the storage ones.
        return fail(
          s,
          ctx,
          Completed.reason.OperationFailed,
          `${s.obj.spec.type} needs the storage and snapshot reconcilers, which are off (STORAGE_RECONCILERS=false)`,
        );
      }
      if (s.status.phase === 'Pending') {
        if (!hasFinalizer(s.obj, Finalizer.vmopCleanup)) {
          deps.caches.vmops.remember(await addFinalizer(deps.clients.vmops, s.obj, Finalizer.vmopCleanup, { signal: ctx.signal }));
        }
        const notReady = await op.signal(opContext(deps, s, ctx, s.vm));
        if (notReady !== undefined) {
          conditionOn(s, ctx, { type: Completed.type, status: 'False', reason: Completed.reason.NotReadyToBeExecuted, message: notReady });
          return { requeueAfterMs: 2_000 };
        }
        s.status.phase = 'InProgress';
        conditionOn(s, ctx, { type: SignalSent.type, status: 'True', reason: SignalSent.reason.SignalSentSuccess });
        ctx.log.info({ type: s.obj.spec.type }, 'operation started');
      }
      return follow(deps, s, ctx, op);
    },
  };
}

async function follow(deps: Deps, s: VMOPState, ctx: HandlerContext, op: Operation): Promise<HandlerOutcome | void> {
  const c = opContext(deps, s, ctx, s.vm as VirtualMachine);
  const progress = await op.check(c);
  if (progress.resources !== undefined) s.status.resources = progress.resources;
  if (progress.state === 'waiting') {
    conditionOn(s, ctx, { type: Completed.type, status: 'False', reason: progress.reason, message: progress.message ?? '' });
    if (progress.progress !== undefined) s.status.progress = progress.progress;
    return progress.recheckMs === undefined ? undefined : { requeueAfterMs: progress.recheckMs };
  }
  await op.cleanup(c);
  if (progress.state === 'failed') return fail(s, ctx, Completed.reason.OperationFailed, progress.message);
  s.status.phase = 'Completed';
  if (s.status.progress !== undefined) s.status.progress = '100%';
  conditionOn(s, ctx, { type: Completed.type, status: 'True', reason: Completed.reason.OperationCompleted });
  ctx.log.info({ type: s.obj.spec.type }, 'operation completed');
}
