/**
 * What the storage reconcilers share: their clients and caches, the helper settings, and the few
 * operations on helper Pods every data source needs (start a step once, read how it stands, clean up).
 */
import { AlreadyExistsError, NotFoundError } from '../../../../shared/errors/index.js';
import type { KubeObject } from '../../../../shared/kube/index.js';
import type { Deps } from '../../deps.js';
import type { ObjectCache } from '../../engine/cache.js';
import type { DvcrGcPort } from './postpone.js';
import type { VolumeHotplug } from '../vmbda/hotplug.js';
import {
  OWNER_ANNOTATION,
  helperPod,
  outcomeOf,
  ownerTag,
  progressFromMetrics,
  uploaderService,
  type HelperOutcome,
  type HelperPodInput,
  type HelperSettings,
} from './importer.js';
import type { ConfigMap, HelperPod, PVC, StorageClass, StorageClients } from './kube.js';
import type { VirtualMachineBlockDeviceAttachment } from '../../../../shared/api/resources/vmbda.js';
import type { StorageProfile } from '../../../../shared/api/resources/storageprofile.js';
import { objectKey } from '../../../../shared/kube/index.js';

export interface StorageCaches {
  pvcs: ObjectCache<PVC>;
  storageClasses: ObjectCache<StorageClass>;
  storageProfiles: ObjectCache<StorageProfile>;
  helperPods: ObjectCache<HelperPod>;
  vmbdas: ObjectCache<VirtualMachineBlockDeviceAttachment>;
}

/** Reads an importer's progress while it runs (its metrics endpoint). */
export interface ProgressReader {
  read(pod: HelperPod, signal: AbortSignal): Promise<string | undefined>;
}

export interface StorageDeps extends Deps {
  storage: {
    clients: StorageClients;
    caches: StorageCaches;
    settings: HelperSettings;
    progress: ProgressReader;
    hotplug: VolumeHotplug;
    /** Whether a DVCR garbage collection run holds new imports (none: never). */
    dvcrGc?: DvcrGcPort;
  };
}

/** Index of helper Pods by the owner annotation. */
export const HELPERS_BY_OWNER = 'owner';

export function ownerTagOf(obj: KubeObject): string {
  return ownerTag(obj.kind ?? '', obj.metadata.namespace, obj.metadata.name ?? '');
}

/**
 * Start a step's helper Pod unless it exists, and say how it stands. A Pod left by an earlier object
 * of the same name (another uid) is deleted first: the step reports `running` until it is gone.
 */
export async function runStep(d: StorageDeps, input: HelperPodInput, signal: AbortSignal): Promise<HelperOutcome> {
  const { clients, caches, settings } = d.storage;
  const want = helperPod(settings, input);
  const ns = input.namespace;
  const name = want.metadata.name ?? '';
  const existing = caches.helperPods.get(`${ns}/${name}`);
  if (existing !== undefined) {
    if (existing.metadata.ownerReferences?.some((r) => r.uid === input.owner.metadata.uid) === true) return outcomeOf(existing);
    await deleteIgnoringMissing(() => clients.helperPods.delete({ namespace: ns, name }, { signal, propagationPolicy: 'Background' }));
    return { state: 'running', pod: existing };
  }
  const caBundle = caBundleOf(input);
  if (caBundle !== undefined) {
    const cm: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${name}-ca`, namespace: ns, annotations: want.metadata.annotations, ownerReferences: want.metadata.ownerReferences },
      data: { 'ca.crt': Buffer.from(caBundle, 'base64').toString('utf8') },
    };
    await createIgnoringExisting(() => clients.configMaps.create(cm, { signal }));
    want.spec = helperPod(settings, { ...input, caConfigMap: `${name}-ca` }).spec;
  }
  if (input.source.type === 'upload') await createIgnoringExisting(() => clients.services.create(uploaderService(want), { signal }));
  let pod: HelperPod;
  try {
    pod = await clients.helperPods.create(want, { signal });
  } catch (err: unknown) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    pod = await clients.helperPods.get({ namespace: ns, name }, { signal });
  }
  return outcomeOf(caches.helperPods.remember(pod));
}

function caBundleOf(input: HelperPodInput): string | undefined {
  const s = input.source;
  return s.type === 'http' || s.type === 'registry' ? s.caBundle : undefined;
}

/** Delete every helper Pod of an object, with its Service and CA ConfigMap. */
export async function removeHelpers(d: StorageDeps, owner: KubeObject, signal: AbortSignal): Promise<void> {
  const { clients, caches } = d.storage;
  for (const pod of caches.helperPods.byIndex(HELPERS_BY_OWNER, ownerTagOf(owner))) {
    const ref = { namespace: pod.metadata.namespace, name: pod.metadata.name ?? '' };
    await deleteIgnoringMissing(() => clients.helperPods.delete(ref, { signal, propagationPolicy: 'Background' }));
    caches.helperPods.forget(objectKey({ namespace: ref.namespace, name: ref.name }));
    await deleteIgnoringMissing(() => clients.services.delete(ref, { signal }));
    await deleteIgnoringMissing(() => clients.configMaps.delete({ ...ref, name: `${ref.name}-ca` }, { signal }));
  }
}

/** Whether any helper Pod of the object is still known. */
export function hasHelpers(d: StorageDeps, owner: KubeObject): boolean {
  return d.storage.caches.helperPods.countByIndex(HELPERS_BY_OWNER, ownerTagOf(owner)) > 0;
}

export async function createIgnoringExisting(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (err: unknown) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
}

export async function deleteIgnoringMissing(remove: () => Promise<unknown>): Promise<void> {
  try {
    await remove();
  } catch (err: unknown) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}

/** The owner key (`namespace/name` or `name`) from a helper's owner annotation, for enqueueing. */
export function ownerKeyOfHelper(obj: KubeObject): { kind: string; key: string } | undefined {
  const tag = obj.metadata.annotations?.[OWNER_ANNOTATION];
  if (tag === undefined) return undefined;
  const [kind, ...rest] = tag.split('/');
  if (kind === undefined || rest.length === 0) return undefined;
  return { kind, key: rest.join('/') };
}

/** Progress from the importer's metrics endpoint on the Pod IP (best effort: undefined when unreachable). */
export function metricsProgressReader(port: number, timeoutMs = 2_000): ProgressReader {
  return {
    async read(pod, signal): Promise<string | undefined> {
      const ip = pod.status?.podIP;
      if (pod.status?.phase !== 'Running' || ip === undefined || ip === '') return undefined;
      try {
        const res = await fetch(`http://${ip.includes(':') ? `[${ip}]` : ip}:${port}/metrics`, {
          signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
        });
        return res.ok ? progressFromMetrics(await res.text()) : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
