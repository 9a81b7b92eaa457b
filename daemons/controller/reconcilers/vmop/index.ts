import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import { isDeepStrictEqual } from 'node:util';
import { conditionalMergePatch, objectKey } from '../../../../shared/kube/index.js';
import type { Deps } from '../../deps.js';
import { clone, handlerChain } from '../../engine/reconciler.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { OPERATIONS, applicable, deletion, exclusive, execute, lifecycle, targetVM, type Operations, type VMOPState, type VMOPStatus } from './handlers.js';

export { VMOP_BY_VM } from './handlers.js';

/** The types the snapshot reconcilers run (reconcilers/snapshot), when the storage reconcilers do. */
export const SNAPSHOT_OPERATION_TYPES: ReadonlySet<string> = new Set(['Restore', 'Clone']);

export interface VMOPReconcilerOptions {
  name: string;
  operations: Operations;
  /** Which operations this reconciler takes; the others are left alone. */
  takes: (vmop: VirtualMachineOperation) => boolean;
}

/**
 * The VirtualMachineOperation reconciler: by default Start, Stop, Restart, Migrate and Evict (and
 * Restore and Clone only to fail them when the snapshot reconcilers do not run); the snapshot
 * reconcilers run another one with their own operations.
 */
export function vmopReconciler(deps: Deps, options?: VMOPReconcilerOptions): ReconcileFn {
  const operations = options?.operations ?? OPERATIONS;
  const takes =
    options?.takes ?? ((vmop: VirtualMachineOperation): boolean => !deps.config.STORAGE_RECONCILERS || !SNAPSHOT_OPERATION_TYPES.has(vmop.spec.type));
  return handlerChain<VirtualMachineOperation, VMOPStatus, VMOPState>({
    name: options?.name ?? 'vmop',
    load: (key) => {
      const vmop = deps.caches.vmops.get(key);
      return vmop !== undefined && takes(vmop) ? vmop : undefined;
    },
    invalid: (key) => deps.caches.vmops.invalid(key),
    init: (vmop) => ({ obj: vmop, status: clone(vmop.status) ?? ({} as VMOPStatus) }),
    handlers: [deletion(deps, operations), lifecycle(), targetVM(deps), exclusive(deps, operations), applicable(), execute(deps, operations)],
    statusOf: (vmop) => vmop.status,
    writeStatus: async (vmop, patch, signal) => {
      const ref = { namespace: vmop.metadata.namespace, name: vmop.metadata.name ?? '' };
      // On a version whose status is the one this pass decided on (our own finalizer writes aside): a
      // sibling that superseded it meanwhile (supersede.ts) makes the write conflict and the pass rerun.
      const latest = deps.caches.vmops.get(objectKey(ref)) ?? vmop;
      const rv = isDeepStrictEqual(latest.status, vmop.status) ? latest.metadata.resourceVersion : vmop.metadata.resourceVersion;
      const body = conditionalMergePatch({ status: patch }, rv);
      deps.caches.vmops.remember(await deps.clients.vmops.mergePatch(ref, body, { subresource: 'status', signal }));
    },
  });
}
