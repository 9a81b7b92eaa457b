/**
 * VirtualImage and ClusterVirtualImage share one reconciler shape: the data source is imported into
 * DVCR by an importer Pod (or received by an uploader Pod); a VirtualImage stored on a PVC is then
 * copied from DVCR into its claim by a second importer Pod. The result (format, sizes, location) is
 * read from the Pod's termination message. A Ready image is final: later spec changes are not acted on.
 */
import { VICondition } from '../../../../shared/api/conditions/index.js';
import { formatBytes } from '../../../../shared/api/k8s/quantity.js';
import type { ClusterVirtualImage, VirtualImage } from '../../../../shared/api/resources/virtualimage.js';
import { conditionalMergePatch, objectKey, type ResourcePort } from '../../../../shared/kube/index.js';
import type { ObjectCache } from '../../engine/cache.js';
import { conditionOn } from '../../engine/conditions.js';
import { clone, handlerChain, type Handler, type HandlerOutcome, type ReconcileState } from '../../engine/reconciler.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { protectionHandler } from '../protection.js';
import { VMIndex, deviceKey } from '../vm/state.js';
import { hasHelpers, removeHelpers, runStep, type StorageDeps } from './helpers.js';
import { dvcrEndpoint, helperPodName, registryURL, sizeForImage, uploadURL, type HelperOutcome, type ImportResult } from './importer.js';
import { pickStorageClass } from './kube.js';
import { postponeHandler } from './postpone.js';
import { settleProgress } from './progress.js';
import { claimModesFor, diskPVC, ensurePVCWithinQuota, pvcNameOf } from './pvc.js';
import type { ClaimModes } from './modes.js';
import { resolveSource, type SourceProblem } from './source.js';

type AnyImage = VirtualImage | ClusterVirtualImage;
/** Both status shapes in one (a cluster image never gets the VirtualImage-only fields). */
export type ImageStatus = NonNullable<VirtualImage['status']> & { usedInNamespaces?: string[] | undefined };
export type ImageState = ReconcileState<AnyImage, ImageStatus>;

const C = VICondition;

/** What differs between the two image kinds. */
export interface ImageKind<T extends AnyImage> {
  readonly kind: T['kind'];
  readonly name: string;
  readonly finalizer: string;
  cache(d: StorageDeps): Pick<ObjectCache<T>, 'get' | 'invalid' | 'remember'>;
  client(d: StorageDeps): ResourcePort<T>;
  /** The DVCR repo and tag of the image. */
  repo(img: T): string;
  /** Where helper Pods run when the source does not decide it. */
  helperNamespace(d: StorageDeps, img: T): string;
  /** The StorageClass name when the image is stored on a PVC (VirtualImage), else undefined. */
  pvcStorage(img: T): { storageClassName?: string | undefined } | undefined;
  /** The namespace the object refers from (undefined for a cluster image). */
  namespaceOf(img: T): string | undefined;
}

export function imageReconciler<T extends AnyImage>(d: StorageDeps, k: ImageKind<T>): ReconcileFn {
  return handlerChain<AnyImage, ImageStatus, ImageState>({
    name: k.name,
    load: (key) => k.cache(d).get(key),
    invalid: (key) => k.cache(d).invalid(key),
    init: (img) => ({ obj: img, status: clone<ImageStatus | undefined>(img.status) ?? {} }),
    handlers: [deletion(d, k), inUse(d, k), final(d), postponeHandler<ImageState>(d.storage.dvcrGc, d.config.DEPENDENCY_RECHECK_INTERVAL), provision(d, k)],
    statusOf: (img) => img.status,
    settle: (s) => settleProgress(s.status),
    writeStatus: async (img, patch, signal) => {
      // Conditional: a status decided on a stale copy is refused (409) and decided again.
      const body = conditionalMergePatch({ status: patch }, img.metadata.resourceVersion);
      const ref = { namespace: img.metadata.namespace, name: img.metadata.name ?? '' };
      k.cache(d).remember(await k.client(d).mergePatch(ref, body, { subresource: 'status', signal }));
    },
  });
}

/** Keeps the kind's cleanup finalizer; a deleting image has its helper Pods removed first. */
function deletion<T extends AnyImage>(d: StorageDeps, k: ImageKind<T>): Handler<ImageState> {
  return protectionHandler<T, ImageState & { readonly obj: T }>({
    name: 'deletion',
    finalizer: k.finalizer,
    client: k.client(d),
    cache: k.cache(d),
    release: async (s, ctx) => {
      s.status.phase = 'Terminating';
      await removeHelpers(d, s.obj, ctx.signal);
    },
  });
}

/** InUse (VMs that reference the image) and, for a cluster image, the namespaces they are in. */
function inUse<T extends AnyImage>(d: StorageDeps, k: ImageKind<T>): Handler<ImageState> {
  return {
    name: 'inUse',
    handle(s, ctx): void {
      const img = s.obj as T;
      const key = deviceKey(k.kind, k.namespaceOf(img), img.metadata.name ?? '');
      const users = d.caches.vms.byIndex(VMIndex.byDevice, key).filter((vm) => vm.metadata.deletionTimestamp === undefined);
      if (users.length > 0) conditionOn(s, ctx, { type: C.InUse.type, status: 'True', reason: C.InUse.reason.AttachedToVirtualMachine });
      else conditionOn(s, ctx, { type: C.InUse.type, status: 'False', reason: C.InUse.reason.NotInUse });
      if (k.kind === 'ClusterVirtualImage') {
        const namespaces = [...new Set(users.map((vm) => vm.metadata.namespace ?? ''))].sort();
        if (namespaces.length > 0) s.status.usedInNamespaces = namespaces;
        else delete s.status.usedInNamespaces;
      }
    },
  };
}

/** Ready is final; Failed is final for the generation it failed on. Leftover helpers are removed. */
function final(d: StorageDeps): Handler<ImageState> {
  return {
    name: 'final',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const phase = s.obj.status?.phase;
      const failedNow = phase === 'Failed' && s.obj.status?.observedGeneration === s.obj.metadata.generation;
      if (phase === 'Failed' && !failedNow && hasHelpers(d, s.obj)) {
        // A spec changed after a failure: start over once the failed run's Pods are gone.
        await removeHelpers(d, s.obj, ctx.signal);
        return { stop: true, requeueAfterMs: 1_000 };
      }
      if (phase !== 'Ready' && !failedNow) return;
      if (hasHelpers(d, s.obj)) await removeHelpers(d, s.obj, ctx.signal);
      return { stop: true };
    },
  };
}

const DATASOURCE_REASON: Record<SourceProblem, (kind: string) => string> = {
  secretNotFound: () => C.DatasourceReady.reason.ContainerRegistrySecretNotFound,
  notFound: (kind) => notReadyReason(kind),
  notReady: (kind) => notReadyReason(kind),
  inUse: () => C.DatasourceReady.reason.VirtualDiskAttachedToVirtualMachine,
  unsupported: (kind) => notReadyReason(kind),
};

function notReadyReason(kind: string): string {
  switch (kind) {
    case 'ClusterVirtualImage':
      return C.DatasourceReady.reason.ClusterImageNotReady;
    case 'VirtualDisk':
      return C.DatasourceReady.reason.VirtualDiskNotReady;
    case 'VirtualDiskSnapshot':
      return C.DatasourceReady.reason.VirtualDiskSnapshotNotReady;
    default:
      return C.DatasourceReady.reason.ImageNotReady;
  }
}

function provision<T extends AnyImage>(d: StorageDeps, k: ImageKind<T>): Handler<ImageState> {
  return {
    name: 'provision',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const img = s.obj as T;
      s.status.observedGeneration = img.metadata.generation;
      const plan = await resolveSource(d, img.spec.dataSource, k.namespaceOf(img), ctx.signal);
      if (!plan.ok) {
        conditionOn(s, ctx, { type: C.DatasourceReady.type, status: 'False', reason: DATASOURCE_REASON[plan.problem](plan.kind), message: plan.message });
        conditionOn(s, ctx, { type: C.Ready.type, status: 'False', reason: C.Ready.reason.DatasourceNotReady, message: plan.message });
        s.status.phase = 'Pending';
        return { stop: true, requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
      }
      conditionOn(s, ctx, { type: C.DatasourceReady.type, status: 'True', reason: C.DatasourceReady.reason.DatasourceReady });
      if (plan.sourceUID !== undefined) s.status.sourceUID = plan.sourceUID;
      const pvcStorage = k.pvcStorage(img);
      let storageClass: string | undefined;
      let modes: ClaimModes = { accessMode: 'ReadWriteOnce', volumeMode: 'Filesystem' };
      if (pvcStorage !== undefined) {
        const cls = pickStorageClass(d.storage.caches.storageClasses.list(), pvcStorage.storageClassName);
        if (cls === undefined) {
          const message = pvcStorage.storageClassName
            ? `StorageClass ${pvcStorage.storageClassName} does not exist`
            : 'no StorageClass is named and the cluster has no default one';
          conditionOn(s, ctx, { type: C.StorageClassReady.type, status: 'False', reason: C.StorageClassReady.reason.StorageClassNotFound, message });
          conditionOn(s, ctx, { type: C.Ready.type, status: 'False', reason: C.Ready.reason.StorageClassNotReady, message });
          s.status.phase = 'Pending';
          return { stop: true };
        }
        storageClass = cls.metadata.name ?? '';
        s.status.storageClassName = storageClass;
        const claimMade = d.storage.caches.pvcs.get(objectKey({ namespace: img.metadata.namespace, name: pvcNameOf('vi', img) })) !== undefined;
        const resolved = claimMade ? undefined : claimModesFor(d, img, cls);
        if (resolved !== undefined && !resolved.ok) {
          // A missing profile or a mode the class cannot give: Pending with the reason, decided again when the profile changes.
          conditionOn(s, ctx, {
            type: C.StorageClassReady.type,
            status: 'False',
            reason: C.StorageClassReady.reason.StorageClassNotFound,
            message: resolved.message,
          });
          conditionOn(s, ctx, { type: C.Ready.type, status: 'False', reason: C.Ready.reason.StorageClassNotReady, message: resolved.message });
          s.status.phase = 'Pending';
          return { stop: true, requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
        }
        if (resolved !== undefined) modes = resolved.modes;
        conditionOn(s, ctx, { type: C.StorageClassReady.type, status: 'True', reason: C.StorageClassReady.reason.StorageClassReady });
      } else if (k.kind === 'VirtualImage') {
        conditionOn(s, ctx, {
          type: C.StorageClassReady.type,
          status: 'False',
          reason: C.StorageClassReady.reason.DVCRTypeUsed,
          message: 'the image is stored in DVCR',
        });
      }
      // Step 1: the source into DVCR (an upload is received by the uploader Pod).
      const upload = plan.source.type === 'upload';
      const helperNs = plan.sourceNamespace ?? img.metadata.namespace ?? k.helperNamespace(d, img);
      const repo = k.repo(img);
      const first = await runStep(
        d,
        { step: upload ? 'upload' : 'import', owner: img, namespace: helperNs, source: plan.source, destination: { type: 'dvcr', repo } },
        ctx.signal,
      );
      if (upload) {
        s.status.imageUploadURLs = { inCluster: uploadURL({ name: helperPodName('upload', img), namespace: helperNs }) };
      }
      const pull = plan.source.type === 'registry';
      if (first.state !== 'succeeded') return report(d, s, ctx, first, { upload, pull }, pvcStorage !== undefined ? 0.5 : 1);
      const location = first.result.destination?.registryURL ?? registryURL(d.storage.settings, repo);
      s.status.target = { ...s.status.target, registryURL: location };
      if (pvcStorage === undefined || storageClass === undefined) return succeed(s, ctx, first.result);
      // Step 2 (PVC storage): DVCR into the image's claim, sized to the image.
      const pvcName = pvcNameOf('vi', img);
      const claim = await ensurePVCWithinQuota(d, s, ctx, diskPVC(img, pvcName, String(sizeForImage(first.result.virtualSize)), storageClass, modes));
      if (claim === undefined) return { stop: true, requeueAfterMs: d.config.DEPENDENCY_RECHECK_INTERVAL };
      s.status.target = { ...s.status.target, persistentVolumeClaimName: pvcName };
      const second = await runStep(
        d,
        {
          step: 'pvc',
          owner: img,
          namespace: img.metadata.namespace ?? '',
          source: { type: 'registry', image: dvcrEndpoint(d.storage.settings, location) },
          destination: { type: 'pvc', claimName: pvcName, volumeMode: claim.spec.volumeMode },
        },
        ctx.signal,
      );
      if (second.state !== 'succeeded') return report(d, s, ctx, second, { upload: false, pull: false }, 0.5, 50);
      return succeed(s, ctx, first.result);
    },
  };
}

/** How a failed importer's reason reads as a Ready reason. */
export function failureReason(importerReason: string, pull: boolean): 'WaitForUserUploadTimeout' | 'ImagePullFailed' | 'ProvisioningFailed' {
  if (importerReason === 'UploadTimeout') return 'WaitForUserUploadTimeout';
  if (pull && (importerReason === 'SourceNotFound' || importerReason === 'SourceUnreachable' || importerReason === 'SourceHTTPError')) return 'ImagePullFailed';
  return 'ProvisioningFailed';
}

interface StepKind {
  upload: boolean;
  /** The source is a registry (failures to reach it are ImagePullFailed). */
  pull: boolean;
}

/**
 * A step still running or failed: phase, Ready condition, progress (scaled into [offset, offset + 100 *
 * share]). Helpers are removed only once the final phase is stored (handler `final`), so a lost status
 * write never starts the import again.
 */
async function report(
  d: StorageDeps,
  s: ImageState,
  ctx: { now: Date; signal: AbortSignal },
  o: HelperOutcome,
  kind: StepKind,
  share: number,
  offset = 0,
): Promise<HandlerOutcome> {
  if (o.state === 'failed') {
    conditionOn(s, ctx, { type: C.Ready.type, status: 'False', reason: failureReason(o.reason, kind.pull), message: `${o.reason}: ${o.message}` });
    s.status.phase = 'Failed';
    return { stop: true };
  }
  if (kind.upload) {
    conditionOn(s, ctx, { type: C.Ready.type, status: 'False', reason: C.Ready.reason.WaitForUserUpload, message: 'waiting for the user to upload the image' });
    s.status.phase = 'WaitForUserUpload';
  } else {
    conditionOn(s, ctx, { type: C.Ready.type, status: 'False', reason: C.Ready.reason.Provisioning, message: 'the importer is running' });
    s.status.phase = 'Provisioning';
  }
  if (o.state === 'running') s.status.progress = await progressOf(d, o, ctx.signal, s.status.progress, share, offset);
  return { stop: true, requeueAfterMs: d.config.IMPORT_PROGRESS_INTERVAL };
}

/** The progress of a running step, scaled; the last known one when the importer cannot be asked. */
export async function progressOf(
  d: StorageDeps,
  o: HelperOutcome & { state: 'running' },
  signal: AbortSignal,
  last: string | undefined,
  share = 1,
  offset = 0,
): Promise<string> {
  const read = await d.storage.progress.read(o.pod, signal);
  if (read === undefined) return last ?? `${offset}%`;
  return `${(offset + Number.parseFloat(read) * share).toFixed(1)}%`;
}

function succeed(s: ImageState, ctx: { now: Date }, r: ImportResult): HandlerOutcome {
  s.status.format = r.format;
  s.status.cdrom = r.format === 'iso';
  const stored = r.storedSize ?? r.virtualSize;
  s.status.size = { stored: formatBytes(stored), storedBytes: String(stored), unpacked: formatBytes(r.virtualSize), unpackedBytes: String(r.virtualSize) };
  s.status.phase = 'Ready';
  delete s.status.imageUploadURLs;
  conditionOn(s, ctx, { type: C.Ready.type, status: 'True', reason: C.Ready.reason.Ready });
  return { stop: true };
}
