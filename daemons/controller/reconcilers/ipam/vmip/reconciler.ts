import { VMIPCondition } from '../../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../../shared/api/finalizers.js';
import type { VirtualMachineIPAddress } from '../../../../../shared/api/resources/addresses.js';
import { objectKey } from '../../../../../shared/kube/index.js';
import type { Deps } from '../../../deps.js';
import { Expectations } from '../../../engine/expectations.js';
import { conditionOn } from '../../../engine/conditions.js';
import { clone, handlerChain, type Handler, type HandlerContext, type ReconcileState } from '../../../engine/reconciler.js';
import { attachedHandler } from '../../address-attached.js';
import { protectionHandler } from '../../protection.js';
import type { ReconcileFn } from '../../../engine/runner.js';
import { VMIndex } from '../../vm/state.js';
import { VM_UID_LABEL } from '../../vm/handlers/ipam.js';
import { Allocator, leaseHeldBy } from '../allocate.js';
import { restoreOwnerLabel } from '../owner-label.js';
import { leaseNameToIP } from '../../../../../shared/api/ipv4.js';

type Status = NonNullable<VirtualMachineIPAddress['status']>;
interface State extends ReconcileState<VirtualMachineIPAddress, Status> {
  readonly key: string;
}

const Bound = VMIPCondition.Bound;
/** Index on the lease cache: `namespace/name` of the address a lease refers to. */
export const LEASE_BY_VMIP = 'vmip';

/**
 * The VM using the address: the VM that made it (controller ownerReference) or a VM that names it;
 * a live one, or a deleting one whose instance still runs.
 */
function userOf(deps: Deps, s: State): string | undefined {
  const ns = s.obj.metadata.namespace ?? '';
  const owner = s.obj.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'VirtualMachine');
  const ownerVM = owner === undefined ? undefined : deps.caches.vms.get(`${ns}/${owner.name}`);
  const candidates = [
    ...(ownerVM?.metadata.uid === owner?.uid && ownerVM !== undefined ? [ownerVM] : []),
    ...deps.caches.vms.byIndex(VMIndex.byIPAddress, s.key),
  ];
  const user = candidates.find((vm) => {
    if (vm.metadata.deletionTimestamp === undefined) return true;
    return deps.caches.kvvmis.get(`${ns}/${vm.metadata.name ?? ''}`) !== undefined;
  });
  return user?.metadata.name;
}

/** Keeps vmip-cleanup; a deleting address is released only when no VM uses it any more. */
function protection(deps: Deps): Handler<State> {
  return protectionHandler({
    finalizer: Finalizer.vmipCleanup,
    client: deps.clients.vmips,
    cache: deps.caches.vmips,
    heldBy: (s: State) => userOf(deps, s) !== undefined,
  });
}

/** An address the controller made for a VM keeps the VM's uid label (restored when removed). */
function ownerLabel(deps: Deps): Handler<State> {
  return {
    name: 'ownerLabel',
    async handle(s, ctx): Promise<void> {
      const owner = s.obj.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'VirtualMachine');
      if (owner === undefined || s.obj.metadata.deletionTimestamp !== undefined) return;
      await restoreOwnerLabel({ client: deps.clients.vmips, cache: deps.caches.vmips }, s.obj, VM_UID_LABEL, owner.uid, ctx);
    },
  };
}

/** Finds the lease held for this address, or takes one (Static: the asked address; Auto: a free one). */
function bound(deps: Deps, allocator: Allocator): Handler<State> {
  // Leases created by this process, by address uid, until the lease cache's index shows them.
  const created = new Expectations<string>(60_000);
  return {
    name: 'bound',
    async handle(s, ctx): Promise<void> {
      const uid = s.obj.metadata.uid ?? '';
      const expected = created.get(uid);
      const fresh = expected === undefined ? undefined : deps.caches.leases.get(expected);
      const held = [...(fresh !== undefined ? [fresh] : []), ...deps.caches.leases.byIndex(LEASE_BY_VMIP, s.key)].find((l) => leaseHeldBy(l, s.obj));
      const lease = held ?? (await allocateLease(allocator, s, ctx));
      if (lease === undefined) return;
      if (held === undefined) created.set(uid, lease.metadata.name ?? '');
      s.status.address = leaseNameToIP(lease.metadata.name ?? '');
      s.status.phase = 'Bound';
      conditionOn(s, ctx, { type: Bound.type, status: 'True', reason: Bound.reason.Bound });
    },
  };
}

async function allocateLease(allocator: Allocator, s: State, ctx: HandlerContext): Promise<Parameters<typeof leaseHeldBy>[0] | undefined> {
  const result = await allocator.allocate(s.obj, ctx.signal);
  if (result.ok) {
    ctx.log.info({ lease: result.lease.metadata.name }, 'address leased');
    return result.lease;
  }
  const reason = {
    OutOfRange: Bound.reason.VirtualMachineIPAddressIsOutOfTheValidRange,
    AlreadyExists: Bound.reason.VirtualMachineIPAddressLeaseAlreadyExists,
    Exhausted: Bound.reason.VirtualMachineIPAddressLeaseNotReady,
    Off: Bound.reason.VirtualMachineIPAddressLeaseNotReady,
  }[result.reason];
  conditionOn(s, ctx, { type: Bound.type, status: 'False', reason, message: result.message });
  s.status.phase = 'Pending';
  if (s.obj.spec.type === 'Static') delete s.status.address;
  return undefined;
}

function attached(deps: Deps): Handler<State> {
  return attachedHandler((s: State) => userOf(deps, s));
}

export function vmipReconciler(deps: Deps): ReconcileFn {
  const allocator = new Allocator(deps);
  return handlerChain<VirtualMachineIPAddress, Status, State>({
    name: 'vmip',
    load: (key) => deps.caches.vmips.get(key),
    invalid: (key) => deps.caches.vmips.invalid(key),
    init: (vmip) => ({ obj: vmip, key: objectKey(vmip.metadata), status: clone(vmip.status) ?? {} }),
    handlers: [protection(deps), ownerLabel(deps), bound(deps, allocator), attached(deps)],
    statusOf: (vmip) => vmip.status,
    writeStatus: async (vmip, patch, signal) => {
      const ref = { namespace: vmip.metadata.namespace, name: vmip.metadata.name ?? '' };
      deps.caches.vmips.remember(await deps.clients.vmips.patchStatus(ref, patch, { signal }));
    },
  });
}
