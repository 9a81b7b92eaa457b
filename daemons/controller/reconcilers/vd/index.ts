/**
 * VirtualDisk: a PVC of the disk's StorageClass, blank or filled from its data source (an importer
 * into DVCR `vd/<ns>/<name>:<uid>` first for HTTP, registry and upload sources, then DVCR into the
 * PVC; an image already in DVCR or on a PVC is copied into the PVC directly). Once Ready: grow-only
 * resize through the PVC request, PVC loss, and which VMs use the disk.
 */
import { diskUsesDvcr, postponeHandler } from '../provisioning/postpone.js';
import { VDCondition } from '../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../shared/api/finalizers.js';
import { formatBytes, parseQuantity } from '../../../../shared/api/k8s/quantity.js';
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import { errorMessage, httpStatusOf } from '../../../../shared/errors/index.js';
import { conditionalMergePatch, objectKey } from '../../../../shared/kube/index.js';
import { conditionOn, removeCondition } from '../../engine/conditions.js';
import { clone, handlerChain, type Handler, type HandlerContext, type HandlerOutcome, type ReconcileState } from '../../engine/reconciler.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { protectionHandler } from '../protection.js';
import { migration } from './migration.js';
import { VMIndex, deviceKey } from '../vm/state.js';
import { VMBDA_BY_DEVICE } from '../vmbda/index.js';
import { hasHelpers, removeHelpers, runStep, type StorageDeps } from '../provisioning/helpers.js';
import { failureReason, progressOf } from '../provisioning/image-reconciler.js';
import { dvcrEndpoint, helperPodName, registryURL, sizeForImage, uploadURL, type ImportSource } from '../provisioning/importer.js';
import { pickStorageClass, type PVC } from '../provisioning/kube.js';
import { settleProgress } from '../provisioning/progress.js';
import { claimModesFor, diskPVC, ensurePVCWithinQuota, pvcNameOf, pvcSizes } from '../provisioning/pvc.js';
import type { ClaimModes } from '../provisioning/modes.js';
import { resolveSnapshot, resolveSource, type SourceProblem } from '../provisioning/source.js';
import { SNAPSHOT_API_GROUP } from '../../../../shared/api/k8s/volume-snapshot.js';

type Status = NonNullable<VirtualDisk['status']>;
export interface VDState extends ReconcileState<VirtualDisk, Status> {
  pvc?: PVC | undefined;
  /** The modes a new claim gets (resolved while there is no claim yet). */
  modes?: ClaimModes | undefined;
}

const C = VDCondition;
const PROVISIONED = new Set(['Ready', 'Resizing', 'PVCLost', 'Migrating']);

export function vdReconciler(d: StorageDeps): ReconcileFn {
  return handlerChain<VirtualDisk, Status, VDState>({
    name: 'vd',
    load: (key) => d.caches.disks.get(key),
    invalid: (key) => d.caches.disks.invalid(key),
    init: (vd) => ({ obj: vd, status: clone(vd.status) ?? {} }),
    handlers: [
      deletion(d),
      inUse(d),
      final(d),
      postponeHandler<VDState>(d.storage.dvcrGc, d.config.DEPENDENCY_RECHECK_INTERVAL, (s) => diskUsesDvcr(s.obj)),
      storageClass(d),
      provision(d),
      resize(d),
      migration(d),
    ],
    statusOf: (vd) => vd.status,
    settle: (s) => settleProgress(s.status),
    writeStatus: async (vd, patch, signal) => {
      const body = conditionalMergePatch({ status: patch }, vd.metadata.resourceVersion);
      d.caches.disks.remember(
        await d.clients.disks.mergePatch({ namespace: vd.metadata.namespace, name: vd.metadata.name ?? '' }, body, { subresource: 'status', signal }),
      );
    },
  });
}

/** Keeps vd-cleanup; a deleting disk has its helper Pods removed first. */
function deletion(d: StorageDeps): Handler<VDState> {
  return protectionHandler({
    name: 'deletion',
    finalizer: Finalizer.vdCleanup,
    client: d.clients.disks,
    cache: d.caches.disks,
    release: async (s: VDState, ctx) => {
      // The PVC is the disk's (ownerReference): the garbage collector removes it after the disk.
      s.status.phase = 'Terminating';
      await removeHelpers(d, s.obj, ctx.signal);
    },
  });
}

/** status.attachedToVirtualMachines from VM specs and attachments; InUse. */
function inUse(d: StorageDeps): Handler<VDState> {
  return {
    name: 'inUse',
    handle(s, ctx): void {
      const vd = s.obj;
      const ns = vd.metadata.namespace ?? '';
      const name = vd.metadata.name ?? '';
      const users = new Map<string, boolean>();
      for (const vm of d.caches.vms.byIndex(VMIndex.byDevice, deviceKey('VirtualDisk', ns, name))) {
        if (vm.metadata.deletionTimestamp !== undefined) continue;
        const ref = vm.status?.blockDeviceRefs?.find((r) => r.kind === 'VirtualDisk' && r.name === name);
        users.set(vm.metadata.name ?? '', ref?.attached === true);
      }
      for (const a of d.storage.caches.vmbdas.byIndex(VMBDA_BY_DEVICE, deviceKey('VirtualDisk', ns, name))) {
        const vm = a.spec.virtualMachineName;
        users.set(vm, (users.get(vm) ?? false) || a.status?.phase === 'Attached');
      }
      const list = [...users].sort(([a], [b]) => a.localeCompare(b)).map(([vm, mounted]) => ({ name: vm, mounted }));
      if (list.length > 0) s.status.attachedToVirtualMachines = list;
      else delete s.status.attachedToVirtualMachines;
      if (list.length > 0)
        conditionOn(s, ctx, {
          type: C.InUse.type,
          status: 'True',
          reason: C.InUse.reason.AttachedToVirtualMachine,
          message: `used by ${list.map((u) => u.name).join(', ')}`,
        });
      else conditionOn(s, ctx, { type: C.InUse.type, status: 'False', reason: C.InUse.reason.NotInUse });
    },
  };
}

/** Failed is final for its generation; helpers of a finished disk are removed once its phase is stored. */
function final(d: StorageDeps): Handler<VDState> {
  return {
    name: 'final',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const phase = s.obj.status?.phase;
      const failedNow = phase === 'Failed' && s.obj.status?.observedGeneration === s.obj.metadata.generation;
      if ((phase === 'Failed' || PROVISIONED.has(phase ?? '')) && hasHelpers(d, s.obj)) {
        await removeHelpers(d, s.obj, ctx.signal);
        // A spec changed after a failure: start over once the failed run's Pods are gone.
        if (!failedNow && phase === 'Failed') return { stop: true, requeueAfterMs: 1_000 };
      }
      if (failedNow) return { stop: true };
    },
  };
}

/** The disk's class: the one named, else the cluster default; fixed once the PVC exists. */
function storageClass(d: StorageDeps): Handler<VDState> {
  return {
    name: 'storageClass',
    handle(s, ctx): HandlerOutcome | void {
      const vd = s.obj;
      s.status.observedGeneration = vd.metadata.generation;
      const pvcName = s.status.target?.persistentVolumeClaimName ?? pvcNameOf('vd', vd);
      s.pvc = d.storage.caches.pvcs.get(objectKey({ namespace: vd.metadata.namespace, name: pvcName }));
      const named = s.pvc?.spec.storageClassName ?? vd.spec.persistentVolumeClaim?.storageClassName;
      const cls = pickStorageClass(d.storage.caches.storageClasses.list(), named);
      if (cls === undefined) {
        const message = named ? `StorageClass ${named} does not exist` : 'no StorageClass is named and the cluster has no default one';
        conditionOn(s, ctx, { type: C.StorageClassReady.type, status: 'False', reason: C.StorageClassReady.reason.StorageClassNotReady, message });
        if (s.pvc !== undefined) return;
        conditionOn(s, ctx, { type: C.Ready.type, status: 'False', reason: C.Ready.reason.StorageClassIsNotReady, message });
        s.status.phase = 'Pending';
        return { stop: true };
      }
      s.status.storageClassName = cls.metadata.name ?? '';
      if (s.pvc === undefined && !PROVISIONED.has(s.obj.status?.phase ?? '')) {
        const resolved = claimModesFor(d, vd, cls);
        if (!resolved.ok) {
          // A missing profile or a mode the class cannot give: Pending with the reason, decided again when the profile changes.
          conditionOn(s, ctx, {
            type: C.StorageClassReady.type,
            status: 'False',
            reason: C.StorageClassReady.reason.StorageClassNotReady,
            message: resolved.message,
          });
          conditionOn(s, ctx, { type: C.Ready.type, status: 'False', reason: C.Ready.reason.StorageClassIsNotReady, message: resolved.message });
          s.status.phase = 'Pending';
          return { stop: true, requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
        }
        s.modes = resolved.modes;
      }
      conditionOn(s, ctx, { type: C.StorageClassReady.type, status: 'True', reason: C.StorageClassReady.reason.StorageClassReady });
    },
  };
}

/** The reason for a source of `kind`: the original has one reason for a snapshot, whatever its problem. */
const sourceReason = (kind: string, cluster: string, namespaced: string): string =>
  kind === 'VirtualDiskSnapshot' ? C.DatasourceReady.reason.VirtualDiskSnapshot : kind === 'ClusterVirtualImage' ? cluster : namespaced;

const DATASOURCE_REASON: Record<SourceProblem, (kind: string) => string> = {
  secretNotFound: () => C.DatasourceReady.reason.ContainerRegistrySecretNotFound,
  notFound: (kind) => sourceReason(kind, C.DatasourceReady.reason.ClusterImageNotFound, C.DatasourceReady.reason.ImageNotFound),
  notReady: (kind) => sourceReason(kind, C.DatasourceReady.reason.ClusterImageNotReady, C.DatasourceReady.reason.ImageNotReady),
  inUse: () => C.DatasourceReady.reason.ImageNotReady,
  unsupported: (kind) => sourceReason(kind, C.DatasourceReady.reason.ImageNotReady, C.DatasourceReady.reason.ImageNotReady),
};

function fail(s: VDState, ctx: HandlerContext, message: string, reason: string = C.Ready.reason.ProvisioningFailed): HandlerOutcome {
  conditionOn(s, ctx, { type: C.Ready.type, status: 'False', reason, message });
  s.status.phase = 'Failed';
  return { stop: true };
}

/** Until Ready: data into DVCR (when needed), the PVC, the copy into it, then the PVC bound. */
function provision(d: StorageDeps): Handler<VDState> {
  return {
    name: 'provision',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const vd = s.obj;
      const ns = vd.metadata.namespace ?? '';
      if (PROVISIONED.has(vd.status?.phase ?? '')) {
        if (s.pvc !== undefined) return;
        conditionOn(s, ctx, {
          type: C.Ready.type,
          status: 'False',
          reason: C.Ready.reason.PVCLost,
          message: `PVC ${s.status.target?.persistentVolumeClaimName ?? ''} is gone`,
        });
        s.status.phase = 'PVCLost';
        return { stop: true };
      }
      const pvcName = pvcNameOf('vd', vd);
      const requested = parseQuantity(vd.spec.persistentVolumeClaim?.size);
      const ds = vd.spec.dataSource;
      const snapshot = snapshotSourceOf(vd);
      if (snapshot !== undefined) return fromSnapshot(d, s, ctx, snapshot, pvcName);
      let fill: { source: ImportSource; virtualSize: number; offset: number } | undefined;
      if (ds !== undefined) {
        const plan = await resolveSource(d, ds, ns, ctx.signal);
        if (!plan.ok) {
          conditionOn(s, ctx, { type: C.DatasourceReady.type, status: 'False', reason: DATASOURCE_REASON[plan.problem](plan.kind), message: plan.message });
          conditionOn(s, ctx, {
            type: C.Ready.type,
            status: 'False',
            reason: plan.problem === 'notFound' ? C.Ready.reason.DatasourceIsNotFound : C.Ready.reason.DatasourceIsNotReady,
            message: plan.message,
          });
          s.status.phase = 'Pending';
          return { stop: true, requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
        }
        conditionOn(s, ctx, { type: C.DatasourceReady.type, status: 'True', reason: C.DatasourceReady.reason.DatasourceReady });
        if (plan.sourceUID !== undefined) s.status.sourceUID = plan.sourceUID;
        if (plan.image?.cdrom === true) return fail(s, ctx, 'creating a virtual disk from an ISO image is not supported');
        if (plan.image !== undefined && plan.image.unpackedBytes !== undefined && (plan.image.inDVCR || plan.source.type === 'pvc')) {
          fill = { source: plan.source, virtualSize: plan.image.unpackedBytes, offset: 0 };
        } else {
          // Step 1: the source into DVCR.
          const upload = plan.source.type === 'upload';
          const repo = `vd/${ns}/${vd.metadata.name ?? ''}:${vd.metadata.uid ?? ''}`;
          const first = await runStep(
            d,
            { step: upload ? 'upload' : 'import', owner: vd, namespace: plan.sourceNamespace ?? ns, source: plan.source, destination: { type: 'dvcr', repo } },
            ctx.signal,
          );
          if (upload) s.status.imageUploadURLs = { inCluster: uploadURL({ name: helperPodName('upload', vd), namespace: plan.sourceNamespace ?? ns }) };
          if (first.state === 'failed') return fail(s, ctx, `${first.reason}: ${first.message}`, failureReason(first.reason, plan.source.type === 'registry'));
          if (first.state === 'running') {
            conditionOn(
              s,
              ctx,
              upload
                ? { type: C.Ready.type, status: 'False', reason: C.Ready.reason.WaitForUserUpload, message: 'waiting for the user to upload the image' }
                : { type: C.Ready.type, status: 'False', reason: C.Ready.reason.Provisioning, message: 'importing the data source into DVCR' },
            );
            s.status.phase = upload ? 'WaitForUserUpload' : 'Provisioning';
            s.status.progress = await progressOf(d, first, ctx.signal, s.status.progress, 0.5);
            return { stop: true, requeueAfterMs: d.config.IMPORT_PROGRESS_INTERVAL };
          }
          const location = first.result.destination?.registryURL ?? registryURL(d.storage.settings, repo);
          fill = { source: { type: 'registry', image: dvcrEndpoint(d.storage.settings, location) }, virtualSize: first.result.virtualSize, offset: 50 };
        }
        if (requested !== undefined && requested < fill.virtualSize) {
          return fail(
            s,
            ctx,
            `the specified pvc size is insufficient: ${String(vd.spec.persistentVolumeClaim?.size ?? '')} is less than the image's ${formatBytes(fill.virtualSize)}`,
          );
        }
      } else if (requested === undefined) {
        conditionOn(s, ctx, {
          type: C.Ready.type,
          status: 'False',
          reason: C.Ready.reason.ProvisioningNotStarted,
          message: 'a blank disk needs spec.persistentVolumeClaim.size',
        });
        s.status.phase = 'Pending';
        return { stop: true };
      }
      const size = String(vd.spec.persistentVolumeClaim?.size ?? sizeForImage(fill?.virtualSize ?? 0));
      s.pvc = await ensurePVCWithinQuota(d, s, ctx, diskPVC(vd, pvcName, size, s.status.storageClassName ?? '', modesOf(s)));
      if (s.pvc === undefined) return { stop: true, requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
      s.status.target = { persistentVolumeClaimName: pvcName };
      if (fill !== undefined) {
        // Step 2: the data into the PVC.
        const second = await runStep(
          d,
          { step: 'pvc', owner: vd, namespace: ns, source: fill.source, destination: { type: 'pvc', claimName: pvcName, volumeMode: s.pvc.spec.volumeMode } },
          ctx.signal,
        );
        if (second.state === 'failed') return fail(s, ctx, `${second.reason}: ${second.message}`);
        if (second.state === 'running') {
          conditionOn(s, ctx, { type: C.Ready.type, status: 'False', reason: C.Ready.reason.Provisioning, message: 'copying the data into the PVC' });
          s.status.phase = 'Provisioning';
          s.status.progress = await progressOf(d, second, ctx.signal, s.status.progress, fill.offset === 0 ? 1 : 0.5, fill.offset);
          return { stop: true, requeueAfterMs: d.config.IMPORT_PROGRESS_INTERVAL };
        }
      }
      return bound(d, s, ctx);
    },
  };
}

/** The resolved modes (the storageClass handler stops the chain when there are none). */
const modesOf = (s: VDState): ClaimModes => s.modes ?? { accessMode: 'ReadWriteOnce', volumeMode: 'Filesystem' };

/** The VirtualDiskSnapshot a disk is filled from, if that is its data source. */
function snapshotSourceOf(vd: VirtualDisk): string | undefined {
  const ds = vd.spec.dataSource;
  return ds?.type === 'ObjectRef' && ds.objectRef?.kind === 'VirtualDiskSnapshot' ? ds.objectRef.name : undefined;
}

/** A disk restored from a VirtualDiskSnapshot: a claim filled by the CSI driver from its VolumeSnapshot, at least its restore size. */
async function fromSnapshot(d: StorageDeps, s: VDState, ctx: HandlerContext, name: string, pvcName: string): Promise<HandlerOutcome> {
  const vd = s.obj;
  const plan = await resolveSnapshot(d, name, vd.metadata.namespace ?? '', ctx.signal);
  if (!plan.ok) {
    conditionOn(s, ctx, { type: C.DatasourceReady.type, status: 'False', reason: DATASOURCE_REASON[plan.problem](plan.kind), message: plan.message });
    const reason = plan.problem === 'notFound' ? C.Ready.reason.DatasourceIsNotFound : C.Ready.reason.DatasourceIsNotReady;
    conditionOn(s, ctx, { type: C.Ready.type, status: 'False', reason, message: plan.message });
    s.status.phase = 'Pending';
    return { stop: true, requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
  }
  conditionOn(s, ctx, { type: C.DatasourceReady.type, status: 'True', reason: C.DatasourceReady.reason.DatasourceReady });
  if (plan.sourceUID !== undefined) s.status.sourceUID = plan.sourceUID;
  const want = vd.spec.persistentVolumeClaim?.size === undefined ? undefined : String(vd.spec.persistentVolumeClaim.size);
  const [w, r] = [parseQuantity(want), parseQuantity(plan.restoreSize)];
  if (w !== undefined && r !== undefined && w < r) {
    return fail(s, ctx, `the specified pvc size is insufficient: ${want ?? ''} is less than the snapshot's restore size ${plan.restoreSize ?? ''}`);
  }
  const size = want ?? plan.restoreSize;
  if (size === undefined) return fail(s, ctx, `VolumeSnapshot ${plan.volumeSnapshotName} has no restore size: set spec.persistentVolumeClaim.size`);
  const source = { apiGroup: SNAPSHOT_API_GROUP, kind: 'VolumeSnapshot', name: plan.volumeSnapshotName };
  s.pvc = await ensurePVCWithinQuota(d, s, ctx, diskPVC(vd, pvcName, size, s.status.storageClassName ?? '', modesOf(s), source));
  if (s.pvc === undefined) return { stop: true, requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
  s.status.target = { persistentVolumeClaimName: pvcName };
  return bound(d, s, ctx);
}

/** The PVC bound: Ready with its capacity; else waiting for it (or for a first consumer). */
function bound(d: StorageDeps, s: VDState, ctx: HandlerContext): HandlerOutcome {
  const pvc = s.pvc;
  if (pvc?.status?.phase !== 'Bound') {
    const cls = d.storage.caches.storageClasses.get(s.status.storageClassName ?? '');
    if (cls?.volumeBindingMode === 'WaitForFirstConsumer' && s.obj.spec.dataSource === undefined) {
      conditionOn(s, ctx, {
        type: C.Ready.type,
        status: 'False',
        reason: C.Ready.reason.WaitingForFirstConsumer,
        message: 'the PVC is bound when a virtual machine first uses the disk',
      });
      s.status.phase = 'WaitForFirstConsumer';
    } else {
      conditionOn(s, ctx, {
        type: C.Ready.type,
        status: 'False',
        reason: C.Ready.reason.Provisioning,
        message: `waiting for PVC ${pvc?.metadata.name ?? ''} to be bound`,
      });
      s.status.phase = 'Provisioning';
    }
    return { stop: true };
  }
  s.status.capacity = pvcSizes(pvc).capacity ?? pvcSizes(pvc).requested;
  s.status.phase = 'Ready';
  delete s.status.imageUploadURLs;
  conditionOn(s, ctx, { type: C.Ready.type, status: 'True', reason: C.Ready.reason.Ready });
  return {};
}

/** Grow-only resize of a Ready disk through its PVC request; the PVC's progress is mirrored. */
function resize(d: StorageDeps): Handler<VDState> {
  return {
    name: 'resize',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const pvc = s.pvc;
      if (pvc === undefined || (s.status.phase !== 'Ready' && s.status.phase !== 'Resizing')) return;
      const want = s.obj.spec.persistentVolumeClaim?.size === undefined ? undefined : String(s.obj.spec.persistentVolumeClaim.size);
      const { requested, capacity } = pvcSizes(pvc);
      const [w, r, c] = [parseQuantity(want), parseQuantity(requested), parseQuantity(capacity)];
      if (w !== undefined && r !== undefined && w < r) {
        conditionOn(s, ctx, {
          type: C.Resizing.type,
          status: 'False',
          reason: C.Resizing.reason.NotAvailable,
          message: `a disk cannot shrink: ${want ?? ''} is less than the current ${requested ?? ''}`,
        });
        s.status.phase = 'Ready';
        return;
      }
      if (w !== undefined && r !== undefined && w > r) {
        try {
          const patch = { spec: { resources: { requests: { storage: want } } } };
          s.pvc = d.storage.caches.pvcs.remember(
            await d.storage.clients.pvcs.mergePatch({ namespace: pvc.metadata.namespace, name: pvc.metadata.name ?? '' }, patch, { signal: ctx.signal }),
          );
        } catch (err: unknown) {
          const status = httpStatusOf(err);
          if (status !== 403 && status !== 422) throw err;
          conditionOn(s, ctx, {
            type: C.Resizing.type,
            status: 'False',
            reason: C.Resizing.reason.NotAvailable,
            message: `Disk resizing is not allowed: ${errorMessage(err)}`,
          });
          return;
        }
        conditionOn(s, ctx, {
          type: C.Resizing.type,
          status: 'True',
          reason: C.Resizing.reason.InProgress,
          message: `growing from ${requested ?? ''} to ${want ?? ''}`,
        });
        s.status.phase = 'Resizing';
        return;
      }
      if (c !== undefined && r !== undefined && c < r) {
        const pvcCondition = pvc.status?.conditions?.find(
          (x) => x.type === 'Resizing' || x.type === 'FileSystemResizePending' || x.type === 'ControllerResizeError' || x.type === 'NodeResizeError',
        );
        const message =
          pvcCondition !== undefined
            ? `${pvcCondition.type}: ${pvcCondition.message ?? pvcCondition.reason ?? ''}`
            : `growing from ${capacity ?? ''} to ${requested ?? ''}`;
        conditionOn(s, ctx, { type: C.Resizing.type, status: 'True', reason: C.Resizing.reason.InProgress, message });
        s.status.phase = 'Resizing';
        return;
      }
      s.status.conditions = removeCondition(s.status.conditions, C.Resizing.type);
      if (capacity !== undefined) s.status.capacity = capacity;
      s.status.phase = 'Ready';
    },
  };
}
