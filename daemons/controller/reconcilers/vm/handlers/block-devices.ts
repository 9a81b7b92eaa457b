import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import type { InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { Deps } from '../../../deps.js';
import type { Handler } from '../../../engine/reconciler.js';
import { bootOrders, volumeNameOf, type ResolvedDevice } from '../kvvm/devices.js';
import { protectDevice, releaseUnusedDevices } from '../protection.js';
import { condition, type VMState } from '../state.js';
import { resolveDevice, type BlockDeviceRef } from './resolve.js';

const C = VMCondition.BlockDevicesReady;

/**
 * Resolves every blockDeviceRef (disk Ready with a PVC, image Ready with a location), protects the
 * devices in use with their finalizer, releases ones the spec dropped, and reports status.blockDeviceRefs
 * and BlockDevicesReady.
 */
export function blockDevicesHandler(deps: Deps): Handler<VMState> {
  return {
    name: 'blockDevices',
    async handle(s, ctx): Promise<void> {
      const vm = s.obj;
      const refs = vm.spec.blockDeviceRefs;
      const resolved = refs.map((ref) => resolveDevice(deps, vm, ref));
      const kvvmi = deps.caches.kvvmis.get(s.key);
      const orders = bootOrders(refs);
      s.status.blockDeviceRefs = refs.map((ref, i) => {
        const r = resolved[i];
        const size = r?.ok ? r.device.size : r?.size;
        return {
          kind: ref.kind,
          name: ref.name,
          ...(size !== undefined ? { size } : {}),
          attached: isAttached(kvvmi, ref),
          ...(orders[i] !== undefined ? { bootOrder: orders[i] } : {}),
        };
      });
      const problems = resolved.flatMap((r) => (r.ok ? [] : [r.problem]));
      for (const ref of refs) await protectDevice(deps, ref.kind, vm.metadata.namespace, ref.name, ctx.signal);
      await releaseDropped(deps, s, refs, ctx.signal);
      if (problems.length > 0) {
        const message = problems.join('; ');
        condition(s, ctx, { type: C.type, status: 'False', reason: C.reason.BlockDevicesNotReady, message });
        s.waitingFor.push(message);
        return;
      }
      condition(s, ctx, { type: C.type, status: 'True', reason: C.reason.BlockDevicesReady });
      s.devices = resolved.flatMap((r): ResolvedDevice[] => (r.ok ? [r.device] : []));
    },
  };
}

/** A device is attached when the running instance has its volume. */
function isAttached(kvvmi: InternalVirtualMachineInstance | undefined, ref: BlockDeviceRef): boolean {
  if (kvvmi?.status?.phase !== 'Running') return false;
  const volume = volumeNameOf(ref.kind, ref.name);
  return kvvmi.spec.volumes?.some((v) => v.name === volume) ?? false;
}

/** Devices the status still lists but the spec no longer references lose their protection. */
async function releaseDropped(deps: Deps, s: VMState, refs: readonly BlockDeviceRef[], signal: AbortSignal): Promise<void> {
  const current = new Set(refs.map((r) => `${r.kind}/${r.name}`));
  const dropped = (s.obj.status?.blockDeviceRefs ?? []).filter((r) => !current.has(`${r.kind}/${r.name}`));
  if (dropped.length > 0) await releaseUnusedDevices(deps, s.obj, dropped, signal);
}
