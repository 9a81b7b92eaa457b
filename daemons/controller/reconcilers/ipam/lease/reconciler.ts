import { VMIPLeaseCondition } from '../../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../../shared/api/finalizers.js';
import type { VirtualMachineIPAddressLease } from '../../../../../shared/api/resources/addresses.js';
import { conditionalMergePatch, objectKey } from '../../../../../shared/kube/index.js';
import type { Deps } from '../../../deps.js';
import { conditionOn, findCondition } from '../../../engine/conditions.js';
import { clone, handlerChain, type Handler, type HandlerOutcome, type ReconcileState } from '../../../engine/reconciler.js';
import type { ReconcileFn } from '../../../engine/runner.js';
import { ignoreMissing } from '../../vm/handlers/deletion.js';
import { VMIP_UID_LABEL, leaseHeldBy } from '../allocate.js';
import { restoreOwnerLabel } from '../owner-label.js';
import { protectionHandler } from '../../protection.js';

type Status = NonNullable<VirtualMachineIPAddressLease['status']>;
type State = ReconcileState<VirtualMachineIPAddressLease, Status>;

const Bound = VMIPLeaseCondition.Bound;

/** Keeps vmipl-cleanup; a deleting lease just lets go. */
function protection(deps: Deps): Handler<State> {
  return protectionHandler({ finalizer: Finalizer.vmiplCleanup, client: deps.clients.leases, cache: deps.caches.leases });
}

/** Bound while its VirtualMachineIPAddress exists; Released (ref name cleared, namespace kept) after. */
function lifecycle(deps: Deps): Handler<State> {
  return {
    name: 'lifecycle',
    async handle(s, ctx): Promise<void> {
      const lease = s.obj;
      const ref = lease.spec.virtualMachineIPAddressRef;
      const vmip = ref === undefined || ref.name === '' ? undefined : deps.caches.vmips.get(objectKey(ref));
      if (vmip !== undefined && leaseHeldBy(lease, vmip)) {
        await restoreOwnerLabel({ client: deps.clients.leases, cache: deps.caches.leases }, lease, VMIP_UID_LABEL, vmip.metadata.uid ?? '', ctx);
        s.status.phase = 'Bound';
        conditionOn(s, ctx, { type: Bound.type, status: 'True', reason: Bound.reason.Bound });
        return;
      }
      if (ref !== undefined && ref.name !== '') {
        // Conditional: the address reconciler may be taking this lease over (on its own condition).
        const patch = conditionalMergePatch({ spec: { virtualMachineIPAddressRef: { namespace: ref.namespace, name: '' } } }, lease.metadata.resourceVersion);
        deps.caches.leases.remember(await deps.clients.leases.mergePatch({ name: lease.metadata.name ?? '' }, patch, { signal: ctx.signal }));
        ctx.log.info({ vmip: `${ref.namespace}/${ref.name}` }, 'lease released');
      }
      s.status.phase = 'Released';
      conditionOn(s, ctx, { type: Bound.type, status: 'False', reason: Bound.reason.Released, message: 'the VirtualMachineIPAddress is gone' });
    },
  };
}

/** Deletes a Released lease once the retention period has passed since its release. */
function retention(deps: Deps): Handler<State> {
  return {
    name: 'retention',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      if (s.status.phase !== 'Released') return;
      const since = Date.parse(findCondition(s.status.conditions, Bound.type)?.lastTransitionTime ?? '');
      const left = (Number.isNaN(since) ? ctx.now.getTime() : since) + deps.config.VIRTUAL_MACHINE_IP_LEASES_RETENTION_DURATION - ctx.now.getTime();
      if (left > 0) return { requeueAfterMs: left + 1000 };
      await ignoreMissing(deps.clients.leases.delete({ name: s.obj.metadata.name ?? '' }, { signal: ctx.signal }));
      ctx.log.info('released lease deleted after retention');
    },
  };
}

/** In a namespace-scoped run, only leases referring to that namespace are ours to reconcile. */
export function leaseInScope(lease: VirtualMachineIPAddressLease, namespace: string | undefined): boolean {
  return namespace === undefined || lease.spec.virtualMachineIPAddressRef?.namespace === namespace;
}

export function leaseReconciler(deps: Deps): ReconcileFn {
  return handlerChain<VirtualMachineIPAddressLease, Status, State>({
    name: 'vmiplease',
    load: (key) => {
      const lease = deps.caches.leases.get(key);
      return lease !== undefined && leaseInScope(lease, deps.config.WATCH_NAMESPACE) ? lease : undefined;
    },
    invalid: (key) => deps.caches.leases.invalid(key),
    init: (lease) => ({ obj: lease, status: clone(lease.status) ?? {} }),
    handlers: [protection(deps), lifecycle(deps), retention(deps)],
    statusOf: (lease) => lease.status,
    writeStatus: async (lease, patch, signal) => {
      deps.caches.leases.remember(await deps.clients.leases.patchStatus({ name: lease.metadata.name ?? '' }, patch, { signal }));
    },
  });
}
