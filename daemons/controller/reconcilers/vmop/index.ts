import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import type { Deps } from '../../deps.js';
import { clone, handlerChain } from '../../engine/reconciler.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { applicable, deletion, exclusive, execute, lifecycle, targetVM, type VMOPState, type VMOPStatus } from './handlers.js';

export { VMOP_BY_VM } from './handlers.js';

/** The VirtualMachineOperation reconciler. */
export function vmopReconciler(deps: Deps): ReconcileFn {
  return handlerChain<VirtualMachineOperation, VMOPStatus, VMOPState>({
    name: 'vmop',
    load: (key) => deps.caches.vmops.get(key),
    invalid: (key) => deps.caches.vmops.invalid(key),
    init: (vmop) => ({ obj: vmop, status: clone(vmop.status) ?? ({} as VMOPStatus) }),
    handlers: [deletion(deps), lifecycle(), targetVM(deps), exclusive(deps), applicable(), execute(deps)],
    statusOf: (vmop) => vmop.status,
    writeStatus: async (vmop, patch, signal) => {
      const ref = { namespace: vmop.metadata.namespace, name: vmop.metadata.name ?? '' };
      deps.caches.vmops.remember(await deps.clients.vmops.patchStatus(ref, patch, { signal }));
    },
  });
}
