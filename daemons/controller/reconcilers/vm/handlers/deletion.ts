import { Finalizer } from '../../../../../shared/api/finalizers.js';
import { NotFoundError } from '../../../../../shared/errors/index.js';
import { addFinalizer, hasFinalizer, removeFinalizer } from '../../../../../shared/kube/index.js';
import type { Deps } from '../../../deps.js';
import type { Handler, HandlerContext, HandlerOutcome } from '../../../engine/reconciler.js';
import { releaseUnusedDevices } from '../protection.js';
import type { VMState } from '../state.js';
import { ownedAddressOf } from './ipam.js';
import type { MacPort } from './mac.js';
import { releaseUsbClaims } from './usb-devices.js';

/**
 * Keeps `vm-cleanup` on a live VM. On deletion it removes what the controller made (the instance, the
 * internal VM, the IP and MAC addresses it created), waits until they are gone, releases the protection of block
 * devices no other VM uses, and only then lets the VM go.
 */
export function deletionHandler(deps: Deps, macs?: MacPort): Handler<VMState> {
  return {
    name: 'deletion',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const vm = s.obj;
      if (vm.metadata.deletionTimestamp === undefined) {
        if (!hasFinalizer(vm, Finalizer.vmCleanup)) {
          deps.caches.vms.remember(await addFinalizer(deps.clients.vms, vm, Finalizer.vmCleanup, { signal: ctx.signal }));
        }
        return;
      }
      s.status.phase = 'Terminating';
      if (!hasFinalizer(vm, Finalizer.vmCleanup)) return { stop: true };
      const remaining = await deleteOwned(deps, s, ctx);
      for (const vmmac of macs?.ownedBy(vm) ?? []) {
        if (vmmac.metadata.deletionTimestamp === undefined) await macs?.delete(vmmac.metadata.namespace, vmmac.metadata.name ?? '', ctx.signal);
      }
      if (remaining > 0) return { stop: true, requeueAfterMs: 5_000 };
      await releaseUnusedDevices(deps, vm, vm.spec.blockDeviceRefs, ctx.signal);
      await releaseUsbClaims(deps, vm, ctx);
      await removeFinalizer(deps.clients.vms, vm, Finalizer.vmCleanup, { signal: ctx.signal });
      ctx.log.info('cleaned up, finalizer removed');
      s.gone = true;
      return { stop: true };
    },
  };
}

/** Delete the instance, internal VM and owned address; returns how many of them still exist. */
async function deleteOwned(deps: Deps, s: VMState, ctx: HandlerContext): Promise<number> {
  const { caches, clients } = deps;
  const ref = { namespace: s.obj.metadata.namespace, name: s.obj.metadata.name ?? '' };
  const kvvmi = caches.kvvmis.get(s.key);
  const kvvm = caches.kvvms.get(s.key);
  const vmip = ownedAddressOf(deps, s.obj);
  if (kvvmi !== undefined && kvvmi.metadata.deletionTimestamp === undefined) await ignoreMissing(clients.kvvmis.delete(ref, { signal: ctx.signal }));
  if (kvvm !== undefined && kvvm.metadata.deletionTimestamp === undefined) await ignoreMissing(clients.kvvms.delete(ref, { signal: ctx.signal }));
  if (vmip !== undefined && vmip.metadata.deletionTimestamp === undefined) {
    await ignoreMissing(clients.vmips.delete({ namespace: ref.namespace, name: vmip.metadata.name ?? '' }, { signal: ctx.signal }));
  }
  return [kvvmi, kvvm].filter((o) => o !== undefined).length;
}

/** Await a delete; an object already gone is fine. */
export async function ignoreMissing(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (err: unknown) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}
