/**
 * VirtualMachineMACAddressLease: `protection` (vmmacl-cleanup, removed once the lease is deleted) →
 * `lifecycle` (Bound while its address holds it; a lease whose address is gone is deleted, so the
 * MAC returns to the pool).
 */
import { VMMACLeaseCondition } from '../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../shared/api/finalizers.js';
import type { VirtualMachineMACAddressLease } from '../../../../shared/api/resources/addresses.js';
import { NotFoundError } from '../../../../shared/errors/index.js';
import { conditionOn } from '../../engine/conditions.js';
import { clone, handlerChain, type Handler, type ReconcileState } from '../../engine/reconciler.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { protectionHandler } from '../protection.js';
import type { MacParts } from './parts.js';
import { leaseHeldBy } from './vmmac.js';

type Status = NonNullable<VirtualMachineMACAddressLease['status']>;
type State = ReconcileState<VirtualMachineMACAddressLease, Status>;

function protection(parts: MacParts): Handler<State> {
  return protectionHandler({ finalizer: Finalizer.vmmaclCleanup, client: parts.leaseClient, cache: parts.leases });
}

function lifecycle(parts: MacParts): Handler<State> {
  return {
    name: 'lifecycle',
    async handle(s, ctx): Promise<void> {
      const ref = s.obj.spec.virtualMachineMACAddressRef;
      const holder = ref === undefined ? undefined : parts.vmmacs.get(`${ref.namespace}/${ref.name}`);
      if (s.obj.metadata.generation !== undefined) s.status.observedGeneration = s.obj.metadata.generation;
      if (holder !== undefined && leaseHeldBy(s.obj, holder)) {
        s.status.phase = 'Bound';
        conditionOn(s, ctx, { type: VMMACLeaseCondition.Bound.type, status: 'True', reason: VMMACLeaseCondition.Bound.reason.Bound });
        return;
      }
      // The address is gone (or a new one of the same name holds another lease): free the MAC.
      try {
        await parts.leaseClient.delete({ name: s.obj.metadata.name ?? '' }, { signal: ctx.signal, preconditions: { uid: s.obj.metadata.uid ?? '' } });
        ctx.log.info({ lease: s.obj.metadata.name }, 'lease of a vanished MAC address deleted');
      } catch (err: unknown) {
        if (!(err instanceof NotFoundError)) throw err;
      }
      s.gone = true;
    },
  };
}

/**
 * In a namespace-scoped run (WATCH_NAMESPACE) only leases of that namespace's addresses are ours: the
 * others' addresses are not in our cache, so they would look vanished and their leases be deleted.
 */
export function macLeaseInScope(lease: VirtualMachineMACAddressLease, namespace: string | undefined): boolean {
  return namespace === undefined || lease.spec.virtualMachineMACAddressRef?.namespace === namespace;
}

export function vmmacLeaseReconciler(parts: MacParts, watchNamespace: string | undefined): ReconcileFn {
  return handlerChain<VirtualMachineMACAddressLease, Status, State>({
    name: 'vmmaclease',
    load: (key) => {
      const lease = parts.leases.get(key);
      return lease !== undefined && macLeaseInScope(lease, watchNamespace) ? lease : undefined;
    },
    invalid: (key) => parts.leases.invalid(key),
    init: (lease) => ({ obj: lease, status: clone(lease.status) ?? {} }),
    handlers: [protection(parts), lifecycle(parts)],
    statusOf: (lease) => lease.status,
    writeStatus: async (lease, patch, signal) => {
      parts.leases.remember(await parts.leaseClient.patchStatus({ name: lease.metadata.name ?? '' }, patch, { signal }));
    },
  });
}
