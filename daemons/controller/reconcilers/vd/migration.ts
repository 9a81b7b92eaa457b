/**
 * Storage-class migration of a disk in use by a running VM, as the original's vd migration handler
 * does it: a changed `spec.persistentVolumeClaim.storageClassName` gets a target claim in the new
 * class; the VM hands it to KubeVirt as a volume migration (its internal VM's claim swapped with
 * `updateVolumesStrategy: Migration`); when the VM's live migration that started after the disk's
 * succeeds, the source claim is deleted once nothing uses it and the disk's claim is the target; when
 * it fails, or the VM stops, the target claim is deleted once released and the disk stays where it was.
 */
import { VDCondition } from '../../../../shared/api/conditions/index.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import { NotFoundError } from '../../../../shared/errors/index.js';
import { objectKey } from '../../../../shared/kube/index.js';
import { conditionOn, isTrue, removeCondition, rfc3339 } from '../../engine/conditions.js';
import type { Handler, HandlerContext, HandlerOutcome } from '../../engine/reconciler.js';
import type { StorageDeps } from '../provisioning/helpers.js';
import { claimModesFor, diskPVC, ensurePVC, pvcNameOf, pvcSizes } from '../provisioning/pvc.js';
import { VMIndex, deviceKey } from '../vm/state.js';
import type { VDState } from './index.js';

const M = VDCondition.Migrating;
/** How often a migration waiting for a claim to be released looks again (no event tells it: the original waits 5 s). */
const RELEASE_RECHECK_MS = 2_000;

type MigrationState = NonNullable<VDState['status']['migrationState']>;

/** A migration started and not yet ended. */
export const migrationInProgress = (state: MigrationState | undefined): state is MigrationState & { sourcePVC: string; targetPVC: string } =>
  state?.targetPVC !== undefined && state.sourcePVC !== undefined && state.result === undefined;

/** Migrating reasons under which the VM uses the target claim: ready to take the data, or holding it after the move. */
const ON_TARGET = new Set<string>([M.reason.InProgress, M.reason.WaitForSourceVolumeRelease]);

/**
 * The claim a VM should use for a disk that migrates: the target once it is ready to take the data
 * (and until the source is released), else none; a migration being reverted gives the source back.
 */
export function migrationTargetOf(status: VDState['status'] | undefined): { source: string; target: string } | undefined {
  const state = status?.migrationState;
  const migrating = status?.conditions?.find((c) => c.type === M.type);
  if (!migrationInProgress(state) || migrating?.status !== 'True' || !ON_TARGET.has(migrating.reason)) return undefined;
  return { source: state.sourcePVC, target: state.targetPVC };
}

export function migration(d: StorageDeps): Handler<VDState> {
  return {
    name: 'migration',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      if (s.obj.metadata.deletionTimestamp !== undefined) return;
      if (migrationInProgress(s.status.migrationState)) return follow(d, s, ctx, s.status.migrationState);
      const want = s.obj.spec.persistentVolumeClaim?.storageClassName;
      if (want === undefined || want === '' || want === s.status.storageClassName) {
        // The change was taken back (or made): a waiting "class not found" says nothing any more.
        s.status.conditions = removeCondition(s.status.conditions, M.type);
        return;
      }
      if (s.status.phase !== 'Ready' || s.pvc === undefined) return;
      // A migration of this spec that failed is not tried again: a new change of the spec starts one.
      const last = s.status.migrationState;
      if (last?.result === 'Failed' && last.targetPVC === targetNameOf(s.obj)) return;
      const vm = userOf(d, s);
      if (vm === undefined || vm.status?.phase !== 'Running') return;
      return start(d, s, ctx, want);
    },
  };
}

/** The target claim of a migration of the disk's current spec (one name per generation, so a second migration gets a new one). */
const targetNameOf = (vd: VDState['obj']): string => `${pvcNameOf('vd', vd)}-m${String(vd.metadata.generation ?? 0)}`;

/** The VM that has the disk mounted (the original's "currently mounted" VM). */
function userOf(d: StorageDeps, s: VDState): VirtualMachine | undefined {
  const mounted = s.status.attachedToVirtualMachines?.find((a) => a.mounted === true)?.name;
  if (mounted === undefined) return undefined;
  return d.caches.vms.get(objectKey({ namespace: s.obj.metadata.namespace, name: mounted }));
}

async function start(d: StorageDeps, s: VDState, ctx: HandlerContext, want: string): Promise<HandlerOutcome | void> {
  const vd = s.obj;
  const source = s.pvc;
  if (source === undefined) return;
  const cls = d.storage.caches.storageClasses.get(want);
  if (cls === undefined || cls.metadata.deletionTimestamp !== undefined) {
    const message = `StorageClass ${want} not found, waiting for creation; the disk stays on ${source.metadata.name ?? ''}`;
    conditionOn(s, ctx, { type: M.type, status: 'False', reason: M.reason.StorageClassNotFound, message });
    return;
  }
  if (isTrue(s.status.conditions, VDCondition.Resizing.type)) {
    conditionOn(s, ctx, {
      type: M.type,
      status: 'False',
      reason: M.reason.ResizingInProgress,
      message: 'Migration is not allowed while the disk is being resized.',
    });
    return;
  }
  const modes = claimModesFor(d, vd, cls);
  if (!modes.ok) {
    conditionOn(s, ctx, { type: M.type, status: 'False', reason: M.reason.StorageClassNotFound, message: modes.message });
    return;
  }
  const { capacity, requested } = pvcSizes(source);
  const size = capacity ?? requested ?? String(vd.spec.persistentVolumeClaim?.size ?? '');
  const targetName = targetNameOf(vd);
  const target = await ensurePVC(d, diskPVC(vd, targetName, size, want, modes.modes), ctx.signal);
  d.storage.caches.pvcs.remember(target);
  ctx.log.info({ source: source.metadata.name, target: targetName, storageClass: want }, 'volume migration started: target claim created');
  s.status.migrationState = { sourcePVC: source.metadata.name ?? '', targetPVC: targetName, startTimestamp: rfc3339(ctx.now) };
  s.status.phase = 'Migrating';
  conditionOn(s, ctx, { type: M.type, status: 'False', reason: M.reason.WaitForTargetReady, message: 'Migration started.' });
  return follow(d, s, ctx, s.status.migrationState as MigrationState & { sourcePVC: string; targetPVC: string });
}

type Running = MigrationState & { sourcePVC: string; targetPVC: string };

/** A migration in progress: its target's readiness, then the VM's live migration's result. */
async function follow(d: StorageDeps, s: VDState, ctx: HandlerContext, state: Running): Promise<HandlerOutcome | void> {
  s.status.phase = 'Migrating';
  const vm = userOf(d, s) ?? anyUserOf(d, s);
  if (vm === undefined || (vm.status?.phase !== 'Running' && vm.status?.phase !== 'Migrating')) {
    return revert(d, s, ctx, state, vm === undefined ? 'the virtual machine is gone' : 'the virtual machine is not running');
  }
  const live = vm.status?.migrationState;
  if (live?.endTimestamp != null && live.startTimestamp != null && seconds(live.startTimestamp) >= seconds(state.startTimestamp)) {
    // Succeeded for this disk only once the instance runs on its target claim with no volume change left.
    if (live.result === 'Succeeded' && onTarget(d, vm, state.targetPVC)) return complete(d, s, ctx, state);
    if (live.result === 'Failed') return revert(d, s, ctx, state, 'the live migration failed');
  }
  const target = d.storage.caches.pvcs.get(objectKey({ namespace: s.obj.metadata.namespace, name: state.targetPVC }));
  if (target === undefined) {
    return end(s, { ...state, endTimestamp: rfc3339(ctx.now) }, 'Failed', 'Migration failed: target PVC is not found.');
  }
  if (target.status?.phase === 'Bound') {
    conditionOn(s, ctx, { type: M.type, status: 'True', reason: M.reason.InProgress, message: 'The target PersistentVolumeClaim is Bound.' });
    // Handed to KubeVirt, the claim moves with the VM's next live migration (no event of the instance reaches disks).
    return { requeueAfterMs: RELEASE_RECHECK_MS };
  }
  const cls = d.storage.caches.storageClasses.get(target.spec.storageClassName ?? '');
  if (cls?.volumeBindingMode === 'WaitForFirstConsumer') {
    conditionOn(s, ctx, {
      type: M.type,
      status: 'True',
      reason: M.reason.InProgress,
      message: 'The target PersistentVolumeClaim is waiting for the first consumer.',
    });
    return;
  }
  conditionOn(s, ctx, {
    type: M.type,
    status: 'False',
    reason: M.reason.WaitForTargetReady,
    message: 'Waiting for the target PersistentVolumeClaim to be provisioned.',
  });
}

/** Whether the VM's instance uses `claim` and has no volume migration pending (KubeVirt clears `migratedVolumes` when it is done). */
function onTarget(d: StorageDeps, vm: VirtualMachine, claim: string): boolean {
  const vmi = d.caches.kvvmis.get(objectKey({ namespace: vm.metadata.namespace, name: vm.metadata.name ?? '' }));
  const uses = (vmi?.spec.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === claim);
  return uses && (vmi?.status?.migratedVolumes ?? []).length === 0;
}

/** Any VM that lists the disk (during a migration its attachment may read unmounted for a moment). */
function anyUserOf(d: StorageDeps, s: VDState): VirtualMachine | undefined {
  const key = deviceKey('VirtualDisk', s.obj.metadata.namespace ?? '', s.obj.metadata.name ?? '');
  return d.caches.vms.byIndex(VMIndex.byDevice, key).find((vm) => vm.metadata.deletionTimestamp === undefined);
}

/** RFC 3339 to whole seconds (KubeVirt writes seconds, we may write milliseconds). */
const seconds = (at: string | undefined | null): number => Math.floor(Date.parse(at ?? '') / 1000);

/** Whether the VM's internal VM or its instance still names `claim`. */
function claimInUse(d: StorageDeps, s: VDState, claim: string): string | undefined {
  for (const vm of d.caches.vms.byIndex(VMIndex.byDevice, deviceKey('VirtualDisk', s.obj.metadata.namespace ?? '', s.obj.metadata.name ?? ''))) {
    const key = objectKey({ namespace: vm.metadata.namespace, name: vm.metadata.name ?? '' });
    const volumes = [...(d.caches.kvvms.get(key)?.spec.template.spec.volumes ?? []), ...(d.caches.kvvmis.get(key)?.spec.volumes ?? [])];
    if (volumes.some((v) => v.persistentVolumeClaim?.claimName === claim)) return vm.metadata.name;
  }
  return undefined;
}

async function deleteClaim(d: StorageDeps, s: VDState, name: string, signal: AbortSignal): Promise<void> {
  const ref = { namespace: s.obj.metadata.namespace, name };
  if (d.storage.caches.pvcs.get(objectKey(ref)) === undefined) return;
  try {
    await d.storage.clients.pvcs.delete(ref, { signal });
  } catch (err: unknown) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}

/** The live migration succeeded: once the source claim is released it is deleted and the disk lives on the target. */
async function complete(d: StorageDeps, s: VDState, ctx: HandlerContext, state: Running): Promise<HandlerOutcome | void> {
  const user = claimInUse(d, s, state.sourcePVC);
  if (user !== undefined) {
    const message = `Cannot complete the migration. The source PersistentVolumeClaim "${state.sourcePVC}" is still in use by the VirtualMachine "${user}".`;
    conditionOn(s, ctx, { type: M.type, status: 'True', reason: M.reason.WaitForSourceVolumeRelease, message });
    return { requeueAfterMs: RELEASE_RECHECK_MS };
  }
  await deleteClaim(d, s, state.sourcePVC, ctx.signal);
  const target = d.storage.caches.pvcs.get(objectKey({ namespace: s.obj.metadata.namespace, name: state.targetPVC }));
  s.status.target = { persistentVolumeClaimName: state.targetPVC };
  s.status.storageClassName = target?.spec.storageClassName ?? s.obj.spec.persistentVolumeClaim?.storageClassName ?? s.status.storageClassName;
  const capacity = target === undefined ? undefined : pvcSizes(target).capacity;
  if (capacity !== undefined) s.status.capacity = capacity;
  ctx.log.info({ source: state.sourcePVC, target: state.targetPVC }, 'volume migration completed: source claim deleted');
  return end(s, { ...state, endTimestamp: rfc3339(ctx.now) }, 'Succeeded', 'Migration completed.');
}

/** The migration cannot go on: once the target claim is released it is deleted; the disk stays on its source. */
async function revert(d: StorageDeps, s: VDState, ctx: HandlerContext, state: Running, why: string): Promise<HandlerOutcome | void> {
  const user = claimInUse(d, s, state.targetPVC);
  if (user !== undefined) {
    const message = `Cannot revert the migration (${why}). The target PersistentVolumeClaim "${state.targetPVC}" is still in use by the VirtualMachine "${user}".`;
    conditionOn(s, ctx, { type: M.type, status: 'True', reason: M.reason.WaitForTargetVolumeRelease, message });
    return { requeueAfterMs: RELEASE_RECHECK_MS };
  }
  await deleteClaim(d, s, state.targetPVC, ctx.signal);
  ctx.log.info({ source: state.sourcePVC, target: state.targetPVC, why }, 'volume migration reverted: target claim deleted');
  return end(s, { ...state, endTimestamp: rfc3339(ctx.now) }, 'Failed', `Migration reverted: ${why}.`);
}

function end(s: VDState, state: Running, result: 'Succeeded' | 'Failed', message: string): void {
  s.status.migrationState = { ...state, result, message };
  s.status.conditions = removeCondition(s.status.conditions, M.type);
  s.status.phase = 'Ready';
}
