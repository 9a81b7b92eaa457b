/**
 * VirtualMachineMACAddress: `protection` (vmmac-cleanup; a deleting address waits for the VMs using it,
 * then frees its lease) → `bound` (the lease held for it, or a new one: the asked address, else a
 * random one of the cluster's OUI; the lease name is the lock) → `attached` (the VM naming it).
 */
import { VMMACCondition } from '../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../shared/api/finalizers.js';
import { API_VERSION } from '../../../../shared/api/resources/common.js';
import type { VirtualMachineMACAddress, VirtualMachineMACAddressLease } from '../../../../shared/api/resources/addresses.js';
import { AlreadyExistsError, errorMessage } from '../../../../shared/errors/index.js';
import { objectKey } from '../../../../shared/kube/index.js';
import type { Deps } from '../../deps.js';
import { conditionOn } from '../../engine/conditions.js';
import { clone, handlerChain, type Handler, type HandlerContext, type HandlerOutcome, type ReconcileState } from '../../engine/reconciler.js';
import { attachedHandler } from '../address-attached.js';
import { protectionHandler } from '../protection.js';
import { ignoreMissing } from '../vm/handlers/deletion.js';
import { ownerVM } from '../vm/handlers/mac-owned.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { VMMAC_UID_LABEL, leaseNameToMac, macToLeaseName, normalizeMac, randomMac } from './mac.js';
import { LEASE_BY_VMMAC, type MacParts } from './parts.js';

type Status = NonNullable<VirtualMachineMACAddress['status']>;
interface State extends ReconcileState<VirtualMachineMACAddress, Status> {
  readonly key: string;
}

const Bound = VMMACCondition.Bound;
/** How many taken addresses a generated allocation skips before it gives up for this pass. */
const MAX_ATTEMPTS = 32;

export function leaseHeldBy(lease: VirtualMachineMACAddressLease, vmmac: VirtualMachineMACAddress): boolean {
  const ref = lease.spec.virtualMachineMACAddressRef;
  if (ref?.name !== vmmac.metadata.name || ref?.namespace !== vmmac.metadata.namespace) return false;
  const uid = lease.metadata.labels?.[VMMAC_UID_LABEL];
  return uid === undefined || uid === vmmac.metadata.uid;
}

/**
 * The VM whose spec.networks names the address (a live one): the one it is attached to while that VM
 * still names it, else the oldest naming it, so a second VM naming a taken address never takes it over.
 */
function userOf(deps: Deps, s: State): string | undefined {
  const ns = s.obj.metadata.namespace;
  const name = s.obj.metadata.name;
  const naming = deps.caches.vms
    .list()
    .filter(
      (v) =>
        v.metadata.namespace === ns &&
        v.metadata.deletionTimestamp === undefined &&
        (v.spec.networks ?? []).some((n) => n.virtualMachineMACAddressName === name),
    )
    .sort(
      (a, b) =>
        (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
    );
  const current = s.status.virtualMachineName;
  return naming.find((v) => v.metadata.name === current)?.metadata.name ?? naming[0]?.metadata.name ?? ownerUsing(deps, s.obj);
}

/**
 * The VM the controller made this address for, while it uses it (as the original tells): its
 * `status.networks` shows the address, or its internal VM is not made yet or carries the MAC.
 */
function ownerUsing(deps: Deps, vmmac: VirtualMachineMACAddress): string | undefined {
  const owner = ownerVM(vmmac);
  if (owner === undefined) return undefined;
  const key = objectKey({ namespace: vmmac.metadata.namespace, name: owner.name });
  const vm = deps.caches.vms.get(key);
  if (vm === undefined || vm.metadata.uid !== owner.uid || vm.metadata.deletionTimestamp !== undefined) return undefined;
  if ((vm.status?.networks ?? []).some((n) => n.virtualMachineMACAddressName === vmmac.metadata.name)) return owner.name;
  const kvvm = deps.caches.kvvms.get(key);
  const address = vmmac.status?.address;
  if (kvvm === undefined) return owner.name;
  return address !== undefined && (kvvm.spec.template.spec?.domain.devices?.interfaces ?? []).some((i) => i.macAddress === address) ? owner.name : undefined;
}

function heldLease(parts: MacParts, s: State): VirtualMachineMACAddressLease | undefined {
  return parts.leases.byIndex(LEASE_BY_VMMAC, s.key).find((l) => leaseHeldBy(l, s.obj));
}

/** Keeps vmmac-cleanup; a deleting address frees its lease once no VM uses it. */
function protection(deps: Deps, parts: MacParts): Handler<State> {
  return protectionHandler({
    finalizer: Finalizer.vmmacCleanup,
    client: parts.vmmacClient,
    cache: parts.vmmacs,
    heldBy: (s: State) => userOf(deps, s) !== undefined,
    release: async (s: State, ctx) => {
      const lease = heldLease(parts, s);
      if (lease !== undefined) await ignoreMissing(parts.leaseClient.delete({ name: lease.metadata.name ?? '' }, { signal: ctx.signal }));
    },
  });
}

function newLease(vmmac: VirtualMachineMACAddress, mac: string): VirtualMachineMACAddressLease {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualMachineMACAddressLease',
    metadata: { name: macToLeaseName(mac), labels: { [VMMAC_UID_LABEL]: vmmac.metadata.uid ?? '' }, finalizers: [Finalizer.vmmaclCleanup] },
    spec: { virtualMachineMACAddressRef: { name: vmmac.metadata.name ?? '', namespace: vmmac.metadata.namespace ?? '' } },
  };
}

/** Create the lease for `mac`; undefined when another holds it. */
async function take(parts: MacParts, vmmac: VirtualMachineMACAddress, mac: string, signal: AbortSignal): Promise<VirtualMachineMACAddressLease | undefined> {
  if (parts.leases.get(macToLeaseName(mac)) !== undefined) return undefined;
  try {
    return parts.leases.remember(await parts.leaseClient.create(newLease(vmmac, mac), { signal }));
  } catch (err: unknown) {
    if (err instanceof AlreadyExistsError) return undefined;
    throw err;
  }
}

async function allocate(parts: MacParts, s: State, ctx: HandlerContext): Promise<VirtualMachineMACAddressLease | { reason: string; message: string }> {
  const asked = s.obj.spec.address;
  if (asked !== undefined && asked !== '') {
    const mac = normalizeMac(asked);
    const lease = await take(parts, s.obj, mac, ctx.signal);
    if (lease !== undefined) return lease;
    const holder = parts.leases.get(macToLeaseName(mac))?.spec.virtualMachineMACAddressRef;
    return {
      reason: Bound.reason.VirtualMachineMACAddressLeaseAlreadyExists,
      message: `MAC address ${mac} is already leased${holder === undefined ? '' : ` to VirtualMachineMACAddress ${holder.namespace}/${holder.name}`}`,
    };
  }
  let oui: string;
  try {
    oui = await parts.oui(ctx.signal);
  } catch (err: unknown) {
    return { reason: Bound.reason.VirtualMachineMACAddressLeaseNotReady, message: errorMessage(err) };
  }
  const previous = s.status.address;
  if (previous !== undefined) {
    const again = await take(parts, s.obj, previous, ctx.signal);
    if (again !== undefined) return again;
  }
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const lease = await take(parts, s.obj, randomMac(oui, parts.pick), ctx.signal);
    if (lease !== undefined) return lease;
  }
  return { reason: Bound.reason.VirtualMachineMACAddressLeaseNotReady, message: `no free MAC address found in OUI ${oui} after ${MAX_ATTEMPTS} attempts` };
}

/** A failure is looked at again after DEPENDENCY_RECHECK_INTERVAL (the lease it waits for may be freed). */
function bound(deps: Deps, parts: MacParts): Handler<State> {
  return {
    name: 'bound',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const held = heldLease(parts, s);
      const lease = held ?? (await allocate(parts, s, ctx));
      if (!('metadata' in lease)) {
        conditionOn(s, ctx, { type: Bound.type, status: 'False', reason: lease.reason, message: lease.message });
        s.status.phase = 'Pending';
        delete s.status.address;
        return { requeueAfterMs: deps.config.DEPENDENCY_RECHECK_INTERVAL };
      }
      if (held === undefined) ctx.log.info({ lease: lease.metadata.name }, 'MAC address leased');
      s.status.address = leaseNameToMac(lease.metadata.name ?? '') ?? '';
      s.status.phase = 'Bound';
      conditionOn(s, ctx, { type: Bound.type, status: 'True', reason: Bound.reason.Bound });
    },
  };
}

function attached(deps: Deps): Handler<State> {
  return attachedHandler((s: State) => userOf(deps, s));
}

export function vmmacReconciler(deps: Deps, parts: MacParts): ReconcileFn {
  return handlerChain<VirtualMachineMACAddress, Status, State>({
    name: 'vmmac',
    load: (key) => parts.vmmacs.get(key),
    invalid: (key) => parts.vmmacs.invalid(key),
    init: (vmmac) => ({ obj: vmmac, key: objectKey(vmmac.metadata), status: clone(vmmac.status) ?? {} }),
    handlers: [protection(deps, parts), bound(deps, parts), attached(deps)],
    statusOf: (vmmac) => vmmac.status,
    writeStatus: async (vmmac, patch, signal) => {
      parts.vmmacs.remember(await parts.vmmacClient.patchStatus({ namespace: vmmac.metadata.namespace, name: vmmac.metadata.name ?? '' }, patch, { signal }));
    },
  });
}
