/**
 * VirtualMachineBlockDeviceAttachment: hot-plugs a disk or image into a running VM through the
 * subresource API (addvolume), follows the instance's volume status until the volume is Ready, and
 * unplugs it (removevolume) when the attachment is deleted.
 */
import { createHash } from 'node:crypto';
import { VMBDACondition } from '../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../shared/api/finalizers.js';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { VirtualMachineBlockDeviceAttachment } from '../../../../shared/api/resources/vmbda.js';
import { errorMessage } from '../../../../shared/errors/index.js';
import { addFinalizer, conditionalMergePatch, hasFinalizer, removeFinalizer, objectKey } from '../../../../shared/kube/index.js';
import { conditionOn, findCondition, removeCondition } from '../../engine/conditions.js';
import { clone, handlerChain, type Handler, type HandlerOutcome, type ReconcileState } from '../../engine/reconciler.js';
import type { ReconcileFn } from '../../engine/runner.js';
import type { StorageDeps } from '../provisioning/helpers.js';
import { volumeNameOf, type ResolvedDevice } from '../vm/kvvm/devices.js';
import { resolveDeviceIn } from '../vm/handlers/resolve.js';
import { deviceKey } from '../vm/state.js';

type VMBDA = VirtualMachineBlockDeviceAttachment;
type Status = NonNullable<VMBDA['status']>;
interface State extends ReconcileState<VMBDA, Status> {
  device?: ResolvedDevice;
  kvvmi?: InternalVirtualMachineInstance | undefined;
}

const C = VMBDACondition;
/** Index names on the attachment cache. */
export const VMBDA_BY_DEVICE = 'device';
export const VMBDA_BY_VM = 'vm';
/** Hot-plugged devices one VM can take (as the original). */
export const HOTPLUG_CAPACITY = 16;
/** How often an attachment waiting on KubeVirt looks again (besides the instance's own events). */
const RECHECK_MS = 5_000;

export const vmbdaIndexes: Record<string, (a: VMBDA) => string[]> = {
  [VMBDA_BY_DEVICE]: (a) => [deviceKey(a.spec.blockDeviceRef.kind, a.metadata.namespace, a.spec.blockDeviceRef.name)],
  [VMBDA_BY_VM]: (a) => [objectKey({ namespace: a.metadata.namespace, name: a.spec.virtualMachineName })],
};

/**
 * Requests sent by this process, by attachment uid and operation, with when: a request is not sent
 * again within RESEND_AFTER_MS even when the status that records it was not stored (a 409) or the
 * instance in the cache does not show it yet.
 */
class SentRequests {
  private readonly sent = new Map<string, number>();
  recent(key: string, now: number): boolean {
    const at = this.sent.get(key);
    return at !== undefined && now - at < RESEND_AFTER_MS;
  }
  clear(key: string): void {
    this.sent.delete(key);
  }
  mark(key: string, now: number): void {
    this.sent.set(key, now);
    if (this.sent.size > 10_000) this.sent.delete(this.sent.keys().next().value ?? '');
  }
}
const RESEND_AFTER_MS = 30_000;

export function vmbdaReconciler(d: StorageDeps): ReconcileFn {
  const sent = new SentRequests();
  const cache = d.storage.caches.vmbdas;
  const client = d.storage.clients.vmbdas;
  return handlerChain<VMBDA, Status, State>({
    name: 'vmbda',
    load: (key) => cache.get(key),
    invalid: (key) => cache.invalid(key),
    init: (a) => ({ obj: a, status: clone(a.status) ?? {} }),
    handlers: [observe(d), deletion(d, sent), blockDevice(d), virtualMachine(d), conflict(d), capacity(d), attach(d, sent)],
    statusOf: (a) => a.status,
    writeStatus: async (a, patch, signal) => {
      const body = conditionalMergePatch({ status: patch }, a.metadata.resourceVersion);
      cache.remember(await client.mergePatch({ namespace: a.metadata.namespace, name: a.metadata.name ?? '' }, body, { subresource: 'status', signal }));
    },
  });
}

function volumeOf(a: VMBDA): string {
  return volumeNameOf(a.spec.blockDeviceRef.kind, a.spec.blockDeviceRef.name);
}

/** KubeVirt's view of a hot-plugged volume in the instance: present (spec or status) and Ready. */
export function volumeState(
  kvvmi: InternalVirtualMachineInstance | undefined,
  volume: string,
): { present: boolean; ready: boolean; message?: string | undefined } {
  if (kvvmi === undefined) return { present: false, ready: false };
  const inSpec = kvvmi.spec.volumes?.some((v) => v.name === volume) ?? false;
  const st = (kvvmi.status?.volumeStatus ?? []).find((v) => (v as { name?: unknown }).name === volume) as { phase?: string; message?: string } | undefined;
  return { present: inSpec || st !== undefined, ready: st?.phase === 'Ready', message: st?.message };
}

function observe(d: StorageDeps): Handler<State> {
  return {
    name: 'observe',
    handle(s): void {
      const a = s.obj;
      s.status.virtualMachineName = a.spec.virtualMachineName;
      s.status.observedGeneration = a.metadata.generation;
      s.kvvmi = d.caches.kvvmis.get(objectKey({ namespace: a.metadata.namespace, name: a.spec.virtualMachineName }));
    },
  };
}

/** Keeps `vmbda-cleanup`; on delete unplugs the volume this attachment plugged and waits until it is gone. */
function deletion(d: StorageDeps, sent: SentRequests): Handler<State> {
  return {
    name: 'deletion',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const a = s.obj;
      const opts = { signal: ctx.signal };
      if (a.metadata.deletionTimestamp === undefined) {
        if (hasFinalizer(a, Finalizer.vmbdaCleanup)) return;
        d.storage.caches.vmbdas.remember(await addFinalizer(d.storage.clients.vmbdas, a, Finalizer.vmbdaCleanup, opts));
        // The finalizer's own event brings the attachment back: act on that version, not this one.
        s.deferStatus = true;
        return { stop: true };
      }
      s.status.phase = 'Terminating';
      const volume = volumeOf(a);
      const ours = findCondition(a.status?.conditions, C.Attached.type)?.reason !== C.Attached.reason.Conflict;
      if (ours && volumeState(s.kvvmi, volume).present) {
        const pending = findCondition(a.status?.conditions, C.Terminating.type)?.reason === C.Terminating.reason.DetachPending;
        const key = `${a.metadata.uid ?? ''}/remove`;
        if (!pending && !sent.recent(key, ctx.now.getTime())) {
          sent.mark(key, ctx.now.getTime());
          await d.storage.hotplug.removeVolume({ namespace: a.metadata.namespace ?? '', vm: a.spec.virtualMachineName, name: volume }, ctx.signal);
        }
        conditionOn(s, ctx, {
          type: C.Terminating.type,
          status: 'True',
          reason: C.Terminating.reason.DetachPending,
          message: `waiting for volume ${volume} to leave the virtual machine`,
        });
        return { stop: true, requeueAfterMs: RECHECK_MS };
      }
      if (hasFinalizer(a, Finalizer.vmbdaCleanup)) await removeFinalizer(d.storage.clients.vmbdas, a, Finalizer.vmbdaCleanup, opts);
      s.gone = true;
      return { stop: true };
    },
  };
}

function blockDevice(d: StorageDeps): Handler<State> {
  return {
    name: 'blockDevice',
    handle(s, ctx): HandlerOutcome | void {
      const r = resolveDeviceIn(d, s.obj.metadata.namespace ?? '', s.obj.spec.blockDeviceRef);
      if (!r.ok) {
        conditionOn(s, ctx, { type: C.BlockDeviceReady.type, status: 'False', reason: C.BlockDeviceReady.reason.BlockDeviceNotReady, message: r.problem });
        s.status.phase = 'Pending';
        return { stop: true };
      }
      conditionOn(s, ctx, { type: C.BlockDeviceReady.type, status: 'True', reason: C.BlockDeviceReady.reason.BlockDeviceReady });
      s.device = r.device;
    },
  };
}

function virtualMachine(d: StorageDeps): Handler<State> {
  return {
    name: 'virtualMachine',
    handle(s, ctx): HandlerOutcome | void {
      const a = s.obj;
      const name = a.spec.virtualMachineName;
      const vm = d.caches.vms.get(objectKey({ namespace: a.metadata.namespace, name }));
      let problem: string | undefined;
      if (vm === undefined) problem = `VirtualMachine ${name} does not exist`;
      else if (vm.metadata.deletionTimestamp !== undefined) problem = `VirtualMachine ${name} is being deleted`;
      else if (s.kvvmi?.status?.phase !== 'Running') problem = `VirtualMachine ${name} is not running (phase ${vm.status?.phase ?? 'Pending'})`;
      if (problem !== undefined) {
        conditionOn(s, ctx, {
          type: C.VirtualMachineReady.type,
          status: 'False',
          reason: C.VirtualMachineReady.reason.VirtualMachineNotReady,
          message: problem,
        });
        conditionOn(s, ctx, { type: C.Attached.type, status: 'False', reason: C.Attached.reason.NotAttached, message: problem });
        s.status.phase = 'Pending';
        return { stop: true };
      }
      conditionOn(s, ctx, { type: C.VirtualMachineReady.type, status: 'True', reason: C.VirtualMachineReady.reason.VirtualMachineReady });
    },
  };
}

/** One attachment per device: the oldest wins; a device the VM's spec already names cannot be hot-plugged. */
function conflict(d: StorageDeps): Handler<State> {
  return {
    name: 'conflict',
    handle(s, ctx): HandlerOutcome | void {
      const a = s.obj;
      const ref = a.spec.blockDeviceRef;
      const vm = d.caches.vms.get(objectKey({ namespace: a.metadata.namespace, name: a.spec.virtualMachineName }));
      let message: string | undefined;
      if (vm?.spec.blockDeviceRefs.some((r) => r.kind === ref.kind && r.name === ref.name) === true) {
        message = `${ref.kind} ${ref.name} is already in the spec of VirtualMachine ${a.spec.virtualMachineName}`;
      } else {
        const older = d.storage.caches.vmbdas
          .byIndex(VMBDA_BY_DEVICE, deviceKey(ref.kind, a.metadata.namespace, ref.name))
          .filter((o) => o.metadata.uid !== a.metadata.uid && o.metadata.deletionTimestamp === undefined && before(o, a));
        if (older.length > 0) message = `${ref.kind} ${ref.name} is already attached by VirtualMachineBlockDeviceAttachment ${older[0]?.metadata.name ?? ''}`;
      }
      if (message === undefined) return;
      conditionOn(s, ctx, { type: C.Attached.type, status: 'False', reason: C.Attached.reason.Conflict, message });
      s.status.phase = 'Failed';
      return { stop: true };
    },
  };
}

function before(a: VMBDA, b: VMBDA): boolean {
  const [ta, tb] = [a.metadata.creationTimestamp ?? '', b.metadata.creationTimestamp ?? ''];
  return ta !== tb ? ta < tb : (a.metadata.name ?? '') < (b.metadata.name ?? '');
}

function capacity(d: StorageDeps): Handler<State> {
  return {
    name: 'capacity',
    handle(s, ctx): HandlerOutcome | void {
      const a = s.obj;
      if (volumeState(s.kvvmi, volumeOf(a)).present) {
        conditionOn(s, ctx, {
          type: C.DiskAttachmentCapacityAvailable.type,
          status: 'True',
          reason: C.DiskAttachmentCapacityAvailable.reason.CapacityAvailable,
        });
        return;
      }
      const others = d.storage.caches.vmbdas
        .byIndex(VMBDA_BY_VM, objectKey({ namespace: a.metadata.namespace, name: a.spec.virtualMachineName }))
        .filter((o) => o.metadata.uid !== a.metadata.uid && (o.status?.phase === 'Attached' || o.status?.phase === 'InProgress'));
      if (others.length >= HOTPLUG_CAPACITY) {
        const message = `VirtualMachine ${a.spec.virtualMachineName} already has ${String(others.length)} hot-plugged devices (at most ${String(HOTPLUG_CAPACITY)})`;
        conditionOn(s, ctx, {
          type: C.DiskAttachmentCapacityAvailable.type,
          status: 'False',
          reason: C.DiskAttachmentCapacityAvailable.reason.CapacityReached,
          message,
        });
        s.status.phase = 'Pending';
        return { stop: true };
      }
      conditionOn(s, ctx, { type: C.DiskAttachmentCapacityAvailable.type, status: 'True', reason: C.DiskAttachmentCapacityAvailable.reason.CapacityAvailable });
    },
  };
}

/** Ask once (AttachmentRequestSent), then follow the instance until the volume is Ready. */
function attach(d: StorageDeps, sent: SentRequests): Handler<State> {
  return {
    name: 'attach',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const a = s.obj;
      const device = s.device;
      if (device === undefined) return;
      const volume = volumeOf(a);
      const state = volumeState(s.kvvmi, volume);
      s.status.conditions = removeCondition(s.status.conditions, C.Terminating.type);
      if (state.ready) {
        conditionOn(s, ctx, { type: C.Attached.type, status: 'True', reason: C.Attached.reason.Attached });
        s.status.phase = 'Attached';
        return;
      }
      s.status.phase = 'InProgress';
      const recorded = findCondition(a.status?.conditions, C.Attached.type)?.reason === C.Attached.reason.AttachmentRequestSent;
      const key = `${a.metadata.uid ?? ''}/add/${volume}`;
      if (!recorded && !state.present && !sent.recent(key, ctx.now.getTime())) {
        sent.mark(key, ctx.now.getTime());
        try {
          await d.storage.hotplug.addVolume(
            {
              namespace: a.metadata.namespace ?? '',
              vm: a.spec.virtualMachineName,
              name: volume,
              volumeKind: device.kind,
              ...('pvc' in device.source ? { pvcName: device.source.pvc } : { image: device.source.image }),
              serial: device.cdrom ? undefined : createHash('md5').update(device.uid).digest('hex'),
              isCdrom: device.cdrom,
            },
            ctx.signal,
          );
        } catch (err: unknown) {
          if (ctx.signal.aborted) throw err;
          sent.clear(key);
          conditionOn(s, ctx, {
            type: C.Attached.type,
            status: 'False',
            reason: C.Attached.reason.NotAttached,
            message: `the hot-plug request failed: ${errorMessage(err)}`,
          });
          return { requeueAfterMs: 2 * RECHECK_MS };
        }
      }
      const message = state.message ?? `waiting for volume ${volume} to be attached to the virtual machine`;
      conditionOn(s, ctx, { type: C.Attached.type, status: 'False', reason: C.Attached.reason.AttachmentRequestSent, message });
      return { requeueAfterMs: RECHECK_MS };
    },
  };
}
