/**
 * VirtualDiskSnapshot: a CSI VolumeSnapshot (snapshot.storage.k8s.io/v1) of the disk's PVC, controlled
 * by the snapshot and protected by `vdsnapshot-protection`. Pending → InProgress (the VolumeSnapshot
 * asked for) → Ready (the snapshot controller reports it readyToUse) or Failed with the reason: the
 * disk is missing, not Ready or has no PVC, the cluster serves no VolumeSnapshots, the snapshot
 * controller reported an error, or the VolumeSnapshot vanished (Lost). A disk in use by one running
 * VM with requiredConsistency is taken with the VM's filesystems frozen through the subresource API
 * (its guest agent connected) and thawed once the VolumeSnapshot is ready or failed; without an agent,
 * or used by several running VMs, it waits InProgress (PotentiallyInconsistent).
 */
import { VDSnapshotCondition } from '../../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../../shared/api/finalizers.js';
import { SNAPSHOT_API, type VolumeSnapshot } from '../../../../../shared/api/k8s/volume-snapshot.js';
import type { VirtualDiskSnapshot } from '../../../../../shared/api/resources/snapshots.js';
import type { VirtualDisk } from '../../../../../shared/api/resources/virtualdisk.js';
import { AlreadyExistsError } from '../../../../../shared/errors/index.js';
import { hasControllerReference, hasFinalizer, ownerReferenceTo, removeFinalizer, objectKey } from '../../../../../shared/kube/index.js';
import { conditionOn } from '../../../engine/conditions.js';
import { clone, type Handler, type HandlerContext, type HandlerOutcome, type ReconcileState } from '../../../engine/reconciler.js';
import type { ReconcileFn } from '../../../engine/runner.js';
import { shortName } from '../../provisioning/importer.js';
import { protectionHandler } from '../../protection.js';
import { ignoreMissing } from '../../vm/handlers/deletion.js';
import type { SnapshotDeps } from '../deps.js';
import { snapshotChain } from '../parts.js';
import { FROZEN_VM, agentConnected, stillNeededFrozen } from '../freeze.js';

type Status = NonNullable<VirtualDiskSnapshot['status']>;
interface VDSState extends ReconcileState<VirtualDiskSnapshot, Status> {
  disk?: VirtualDisk | undefined;
  pvcName?: string | undefined;
  /** The VMs with a running instance that use the disk. */
  runningUsers?: string[];
  /** The running VM to freeze while the VolumeSnapshot is taken. */
  freezeVM?: string;
}

const C = VDSnapshotCondition;

/** `VirtualDiskSnapshot` cache index: `<ns>/<disk name>` → the snapshots of that disk. */
export const VDS_BY_DISK = 'vdsnapshot-by-disk';

/** The VolumeSnapshot of a disk snapshot: `vds-<name>-<uid>` (a later snapshot of the same name never reuses it). */
export function volumeSnapshotNameOf(vds: VirtualDiskSnapshot): string {
  return shortName(['vds', vds.metadata.name ?? '', vds.metadata.uid ?? ''], 253);
}

export function vdSnapshotReconciler(d: SnapshotDeps): ReconcileFn {
  const cache = d.snapshots.caches.vdSnapshots;
  return snapshotChain<VirtualDiskSnapshot, Status, VDSState>(cache, d.snapshots.clients.vdSnapshots, {
    name: 'vdsnapshot',
    init: (vds) => ({ obj: vds, status: clone(vds.status) ?? {} }),
    handlers: [deletion(d), final(), virtualDisk(d), consistency(d), snapshot(d)],
  });
}

/** `vdsnapshot-cleanup` while it exists; on delete the VolumeSnapshot's protection goes (the garbage collector removes it). */
function deletion(d: SnapshotDeps): Handler<VDSState> {
  return protectionHandler({
    name: 'deletion',
    finalizer: Finalizer.vdSnapshotCleanup,
    client: d.snapshots.clients.vdSnapshots,
    cache: d.snapshots.caches.vdSnapshots,
    release: async (s: VDSState, ctx) => {
      s.status.phase = 'Terminating';
      const vs = ownVolumeSnapshot(d, s.obj);
      if (vs === undefined) return;
      if (s.obj.status?.phase === 'InProgress') await thaw(d, s, ctx, vs);
      if (hasFinalizer(vs, Finalizer.vdSnapshotProtection))
        await ignoreMissing(removeFinalizer(d.snapshots.clients.volumeSnapshots, vs, Finalizer.vdSnapshotProtection, { signal: ctx.signal }));
    },
  });
}

/** Failed is final: the spec cannot change, so nothing would turn out differently. */
function final(): Handler<VDSState> {
  return {
    name: 'final',
    handle(s): HandlerOutcome | void {
      s.status.observedGeneration = s.obj.metadata.generation;
      if (s.obj.status?.phase === 'Failed') return { stop: true };
    },
  };
}

function fail(s: VDSState, ctx: HandlerContext, reason: string, message: string): HandlerOutcome {
  conditionOn(s, ctx, { type: C.VirtualDiskSnapshotReady.type, status: 'False', reason, message });
  s.status.phase = 'Failed';
  return { stop: true };
}

/** Before the VolumeSnapshot is asked for: the disk exists, is Ready and has its PVC. */
function virtualDisk(d: SnapshotDeps): Handler<VDSState> {
  return {
    name: 'virtualDisk',
    handle(s, ctx): HandlerOutcome | void {
      const ns = s.obj.metadata.namespace ?? '';
      const name = s.obj.spec.virtualDiskName;
      s.disk = d.caches.disks.get(`${ns}/${name}`);
      if (s.status.volumeSnapshotName !== undefined) return;
      const notReady = (message: string): HandlerOutcome => {
        conditionOn(s, ctx, { type: C.VirtualDiskReady.type, status: 'False', reason: C.VirtualDiskReady.reason.VirtualDiskNotReadyForSnapshotting, message });
        return fail(s, ctx, C.VirtualDiskSnapshotReady.reason.VirtualDiskSnapshotFailed, message);
      };
      const vd = s.disk;
      if (vd === undefined) return notReady(`VirtualDisk ${name} does not exist in namespace ${ns}`);
      if (vd.metadata.deletionTimestamp !== undefined) return notReady(`VirtualDisk ${name} is being deleted`);
      if (vd.status?.phase !== 'Ready')
        return notReady(`VirtualDisk ${name} is not Ready (phase ${vd.status?.phase ?? 'unset'}): only a Ready disk can be snapshotted`);
      const pvcName = vd.status.target?.persistentVolumeClaimName;
      if (pvcName === undefined || pvcName === '') return notReady(`VirtualDisk ${name} has no PersistentVolumeClaim`);
      if (d.storage.caches.pvcs.get(`${ns}/${pvcName}`) === undefined)
        return notReady(`the PersistentVolumeClaim ${pvcName} of VirtualDisk ${name} does not exist`);
      s.pvcName = pvcName;
      conditionOn(s, ctx, { type: C.VirtualDiskReady.type, status: 'True', reason: C.VirtualDiskReady.reason.VirtualDiskReady });
    },
  };
}

/**
 * A disk in use by one running VM whose guest agent is connected is snapshotted frozen; with
 * requiredConsistency it otherwise waits (no agent, or several running VMs); without it, it is
 * snapshotted as it is and marked inconsistent.
 */
function consistency(d: SnapshotDeps): Handler<VDSState> {
  return {
    name: 'consistency',
    handle(s, ctx): HandlerOutcome | void {
      if (s.status.volumeSnapshotName !== undefined) return;
      const ns = s.obj.metadata.namespace ?? '';
      const running = (s.disk?.status?.attachedToVirtualMachines ?? []).map((u) => u.name).filter((vm) => d.caches.kvvmis.get(`${ns}/${vm}`) !== undefined);
      s.runningUsers = running;
      // A VM snapshot that froze the VM itself takes its disk snapshots without requiredConsistency.
      if (running.length === 0 || !s.obj.spec.requiredConsistency) return;
      const [only] = running;
      if (running.length === 1 && only !== undefined && agentConnected(d.caches.kvvmis.get(`${ns}/${only}`))) {
        s.freezeVM = only;
        return;
      }
      const why =
        running.length > 1
          ? `is in use by several running VirtualMachines (${running.join(', ')}), which cannot be frozen together`
          : `is in use by the running VirtualMachine ${running.join(', ')} whose guest agent is not connected, so its filesystems cannot be frozen`;
      conditionOn(s, ctx, {
        type: C.VirtualDiskSnapshotReady.type,
        status: 'False',
        reason: C.VirtualDiskSnapshotReady.reason.PotentiallyInconsistent,
        message: `VirtualDisk ${s.obj.spec.virtualDiskName} ${why}: waiting (or snapshot with requiredConsistency: false)`,
      });
      s.status.phase = 'InProgress';
      return { stop: true, requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
    },
  };
}

/** Thaw the VM a VolumeSnapshot was taken frozen, if it still runs (a stopped VM has nothing frozen). */
async function thaw(d: SnapshotDeps, s: VDSState, ctx: HandlerContext, vs: VolumeSnapshot): Promise<void> {
  const vm = vs.metadata.annotations?.[FROZEN_VM];
  const ns = s.obj.metadata.namespace ?? '';
  if (vm === undefined || d.caches.kvvmis.get(`${ns}/${vm}`) === undefined) return;
  if (stillNeededFrozen(d, ns, vm, { volumeSnapshot: vs.metadata.name })) {
    ctx.log.info({ vm }, 'filesystems stay frozen for another snapshot');
    return;
  }
  await d.snapshots.filesystems.unfreeze(ns, vm, ctx.signal);
  ctx.log.info({ vm }, 'filesystems thawed');
}

/** The VolumeSnapshot of this disk snapshot, if it exists and is ours. */
function ownVolumeSnapshot(d: SnapshotDeps, vds: VirtualDiskSnapshot): VolumeSnapshot | undefined {
  const name = vds.status?.volumeSnapshotName ?? volumeSnapshotNameOf(vds);
  const vs = d.snapshots.caches.volumeSnapshots?.get(objectKey({ namespace: vds.metadata.namespace, name }));
  return vs !== undefined && hasControllerReference(vs, vds) ? vs : undefined;
}

/** Ask for the VolumeSnapshot once, then follow it to readyToUse (Ready), an error or its loss (Failed). */
function snapshot(d: SnapshotDeps): Handler<VDSState> {
  return {
    name: 'snapshot',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const vds = s.obj;
      const R = C.VirtualDiskSnapshotReady.reason;
      if (d.snapshots.caches.volumeSnapshots === undefined) {
        return fail(s, ctx, R.VirtualDiskSnapshotFailed, `the cluster does not serve ${SNAPSHOT_API} VolumeSnapshots: a CSI snapshot controller is needed`);
      }
      const name = s.status.volumeSnapshotName ?? volumeSnapshotNameOf(vds);
      let vs = d.snapshots.caches.volumeSnapshots.get(objectKey({ namespace: vds.metadata.namespace, name }));
      if (vs === undefined) {
        if (s.status.volumeSnapshotName !== undefined) return fail(s, ctx, R.Lost, `VolumeSnapshot ${name} is gone: the snapshot's data is lost`);
        if (s.freezeVM !== undefined) {
          conditionOn(s, ctx, {
            type: C.VirtualDiskSnapshotReady.type,
            status: 'False',
            reason: R.FileSystemFreezing,
            message: `freezing VirtualMachine ${s.freezeVM}`,
          });
          await d.snapshots.filesystems.freeze(vds.metadata.namespace ?? '', s.freezeVM, ctx.signal);
          ctx.log.info({ vm: s.freezeVM }, 'filesystems frozen');
        }
        vs = await createVolumeSnapshot(d, vds, name, s.pvcName ?? '', s.freezeVM, ctx.signal);
      }
      if (!hasControllerReference(vs, vds))
        return fail(s, ctx, R.VirtualDiskSnapshotFailed, `VolumeSnapshot ${name} exists and does not belong to this snapshot`);
      // Recorded with the first status write after the VolumeSnapshot exists (a lost write is redone from the cache).
      if (s.status.volumeSnapshotName === undefined) {
        s.status.volumeSnapshotName = name;
        s.status.consistent = (s.runningUsers ?? []).length === 0 || vs.metadata.annotations?.[FROZEN_VM] !== undefined;
      }
      const error = vs.status?.error;
      if (error !== undefined) {
        await thaw(d, s, ctx, vs);
        return fail(s, ctx, R.VirtualDiskSnapshotFailed, `VolumeSnapshot ${name} failed: ${error.message ?? 'no message'}`);
      }
      if (vs.status?.readyToUse !== true) {
        conditionOn(s, ctx, {
          type: C.VirtualDiskSnapshotReady.type,
          status: 'False',
          reason: R.Snapshotting,
          message: `waiting for VolumeSnapshot ${name} to be ready to use`,
        });
        s.status.phase = 'InProgress';
        return;
      }
      // Thawed once, on the way to Ready (again after a lost status write: thawing twice is harmless).
      if (s.obj.status?.phase !== 'Ready') await thaw(d, s, ctx, vs);
      const message = s.status.consistent === false ? 'taken while the disk was in use by a running VM: potentially inconsistent' : '';
      conditionOn(s, ctx, { type: C.VirtualDiskSnapshotReady.type, status: 'True', reason: R.VirtualDiskSnapshotReady, message });
      s.status.phase = 'Ready';
    },
  };
}

async function createVolumeSnapshot(
  d: SnapshotDeps,
  vds: VirtualDiskSnapshot,
  name: string,
  pvcName: string,
  frozenVM: string | undefined,
  signal: AbortSignal,
): Promise<VolumeSnapshot> {
  const want: VolumeSnapshot = {
    apiVersion: SNAPSHOT_API,
    kind: 'VolumeSnapshot',
    metadata: {
      name,
      namespace: vds.metadata.namespace,
      labels: { 'virtualization.deckhouse.io/owner-kind': 'VirtualDiskSnapshot' },
      ...(frozenVM !== undefined ? { annotations: { [FROZEN_VM]: frozenVM } } : {}),
      finalizers: [Finalizer.vdSnapshotProtection],
      ownerReferences: [{ ...ownerReferenceTo(vds, { controller: true, blockOwnerDeletion: true }) }],
    },
    // No class named: the snapshot controller takes the default class of the PVC's CSI driver.
    spec: { source: { persistentVolumeClaimName: pvcName } },
  };
  const cache = d.snapshots.caches.volumeSnapshots;
  try {
    return cache?.remember(await d.snapshots.clients.volumeSnapshots.create(want, { signal })) ?? want;
  } catch (err: unknown) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    const got = await d.snapshots.clients.volumeSnapshots.get({ namespace: vds.metadata.namespace, name }, { signal });
    return cache?.remember(got) ?? got;
  }
}
