/**
 * The evacuation reconciler (the original's evacuation controller), keyed by VM: a VM whose
 * EvictionRequired is True (its instance was marked for evacuation by KubeVirt's eviction
 * interceptor, e.g. during a node drain) gets an `Evict` VirtualMachineOperation, named
 * `evacuation-<random>`, annotated `virtualization.deckhouse.io/evacuation: "true"` and protected by
 * the finalizer `vmop-protection-by-evacuation-controller`. The operation migrates the VM away (the
 * vmop reconciler), and KubeVirt clears the mark once the instance runs elsewhere.
 * - No new operation while a Migrate or Evict of the VM is unfinished, or while the VM migrates.
 * - A finished migration operation loses the finalizer; so do those of a VM that is gone.
 * - An evacuation operation deleted before it finished cancels the evacuation (the instance's mark is
 *   removed, as virt-api's `evacuatecancel` does), then lets go.
 * - After failed evacuation operations of the VM the next one waits: 2 s after the last failure,
 *   doubling with each failed one kept, at most 5 min (the original's evacuation backoff).
 */
import { VMCondition } from '../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../shared/api/finalizers.js';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import { doublingDelay, hasFinalizer, removeFinalizer, type ResourcePort } from '../../../../shared/kube/index.js';
import { KubeApiError, NotFoundError } from '../../../../shared/errors/index.js';
import { childLogger, type Logger } from '../../../../shared/log/index.js';
import type { CachePort } from '../../deps.js';
import type { ObjectCache } from '../../engine/cache.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { VMOP_BY_VM } from '../vmop/index.js';

/** The original's annotation on the operations it creates (`AnnVMOPEvacuation`). */
export const EVACUATION_ANNOTATION = 'virtualization.deckhouse.io/evacuation';
/** The original's generateName of those operations. */
export const EVACUATION_PREFIX = 'evacuation-';

/** The original's spacing of evacuation operations after failed ones: 2 s, doubling, at most 5 min. */
export const EVACUATION_BACKOFF = { initialMs: 2_000, maxMs: 300_000 } as const;

const FINAL = new Set(['Completed', 'Failed', 'Superseded']);
const PROTECTION = Finalizer.vmopProtectionByEvacuationController;

export interface EvacuationDeps {
  vms: Pick<CachePort<VirtualMachine>, 'get'>;
  vmops: Pick<ObjectCache<VirtualMachineOperation>, 'byIndex' | 'remember'>;
  vmopClient: ResourcePort<VirtualMachineOperation>;
  kvvmis: Pick<ObjectCache<InternalVirtualMachineInstance>, 'get' | 'remember'>;
  kvvmiClient: Pick<ResourcePort<InternalVirtualMachineInstance>, 'jsonPatch'>;
  logger?: Logger;
  /** Milliseconds since the epoch (tests pass their own). */
  now?: () => number;
}

const isMigration = (op: VirtualMachineOperation): boolean => op.spec.type === 'Migrate' || op.spec.type === 'Evict';
const isFinished = (op: VirtualMachineOperation): boolean => FINAL.has(op.status?.phase ?? '');
const isEvacuation = (op: VirtualMachineOperation): boolean => op.metadata.annotations?.[EVACUATION_ANNOTATION] !== undefined;

/**
 * Whether the VM asks to be evacuated and nothing moves it yet. The instance's mark is read too: the
 * VM's condition may lag behind a cancelled evacuation.
 */
export function needsEvacuation(vm: VirtualMachine, vmi: InternalVirtualMachineInstance | undefined): boolean {
  const required = vm.status?.conditions?.find((c) => c.type === VMCondition.EvictionRequired.type)?.status === 'True';
  const marked = (vmi?.status?.evacuationNodeName ?? '') !== '';
  return required && marked && vm.status?.phase !== 'Migrating' && vm.metadata.deletionTimestamp === undefined;
}

/** When an operation finished: its latest condition transition, else its creation. */
function finishedAt(op: VirtualMachineOperation): number {
  const times = (op.status?.conditions ?? []).map((c) => Date.parse(c.lastTransitionTime ?? '')).filter((t) => Number.isFinite(t));
  return times.length > 0 ? Math.max(...times) : Date.parse(op.metadata.creationTimestamp ?? '') || 0;
}

/**
 * How long the next evacuation operation of a VM must still wait, given its operations: 0 with no
 * failed evacuation operation; else the backoff of as many failures, counted from the last one.
 */
export function evacuationBackoff(ops: readonly VirtualMachineOperation[], now: number): number {
  const failed = ops.filter((op) => isEvacuation(op) && op.status?.phase === 'Failed');
  if (failed.length === 0) return 0;
  const last = Math.max(...failed.map(finishedAt));
  return Math.max(0, last + doublingDelay(EVACUATION_BACKOFF, failed.length - 1) - now);
}

/** The operation the original creates for a VM to evacuate. */
export function evacuationOperation(vm: VirtualMachine): VirtualMachineOperation {
  return {
    apiVersion: 'virtualization.deckhouse.io/v1alpha2',
    kind: 'VirtualMachineOperation',
    metadata: {
      generateName: EVACUATION_PREFIX,
      namespace: vm.metadata.namespace,
      annotations: { [EVACUATION_ANNOTATION]: 'true' },
      finalizers: [PROTECTION],
    },
    spec: { type: 'Evict', virtualMachineName: vm.metadata.name ?? '' },
  };
}

export function evacuationReconciler(d: EvacuationDeps): ReconcileFn {
  const log = d.logger ?? childLogger({ component: 'controller', controller: 'evacuation' });
  const release = async (op: VirtualMachineOperation, signal: AbortSignal): Promise<void> => {
    if (!hasFinalizer(op, PROTECTION)) return;
    try {
      d.vmops.remember(await removeFinalizer(d.vmopClient, op, PROTECTION, { signal }));
    } catch (err: unknown) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  };
  return async (key, signal) => {
    const ops = d.vmops.byIndex(VMOP_BY_VM, key).filter(isMigration);
    const vm = d.vms.get(key);
    // The VM is gone: nothing is left to evacuate or cancel.
    if (vm === undefined) {
      for (const op of ops) await release(op, signal);
      return;
    }
    for (const op of ops.filter(isFinished)) await release(op, signal);
    const open = ops.filter((op) => !isFinished(op));
    if (open.length > 0) {
      for (const op of open.filter((o) => isEvacuation(o) && o.metadata.deletionTimestamp !== undefined && hasFinalizer(o, PROTECTION))) {
        await cancelEvacuation(d, vm, signal);
        log.info({ object: key, operation: op.metadata.name }, 'evacuation operation deleted before it finished: evacuation cancelled');
        await release(op, signal);
      }
      return;
    }
    if (!needsEvacuation(vm, d.kvvmis.get(key))) return;
    // A failed Evict leaves the mark: the next one waits, so that a migration that keeps failing is not retried in a tight loop.
    const wait = evacuationBackoff(ops, (d.now ?? Date.now)());
    if (wait > 0) {
      log.info({ object: key, waitMs: wait }, 'the last evacuation operation failed: the next one waits');
      return { requeueAfterMs: wait };
    }
    const created = d.vmops.remember(await d.vmopClient.create(evacuationOperation(vm), { signal }));
    log.info({ object: key, operation: created.metadata.name, node: vm.status?.nodeName }, 'VM marked for evacuation: Evict operation created');
  };
}

/** What virt-api's `evacuatecancel` does: the instance is no longer marked to leave its node. */
async function cancelEvacuation(d: EvacuationDeps, vm: VirtualMachine, signal: AbortSignal): Promise<void> {
  const ref = { namespace: vm.metadata.namespace, name: vm.metadata.name ?? '' };
  try {
    d.kvvmis.remember(await d.kvvmiClient.jsonPatch(ref, [{ op: 'remove', path: '/status/evacuationNodeName' }], { signal }));
  } catch (err: unknown) {
    // No instance, or it is not marked (the JSON patch's remove fails with 422): nothing to cancel.
    if (err instanceof NotFoundError || (err instanceof KubeApiError && err.status === 422)) return;
    throw err;
  }
}
