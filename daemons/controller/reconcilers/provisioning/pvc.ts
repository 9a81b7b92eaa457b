/** The PersistentVolumeClaims that hold disks and PVC-stored images. */
import type { Condition } from '../../../../shared/api/k8s/core.js';
import { AlreadyExistsError, KubeApiError } from '../../../../shared/errors/index.js';
import { conditionOn } from '../../engine/conditions.js';
import { ownerReferenceTo, type KubeObject, objectKey } from '../../../../shared/kube/index.js';
import { shortName } from './importer.js';
import type { StorageDeps } from './helpers.js';
import type { PVC } from './kube.js';
import { resolveClaimModes, type ClaimModes, type ModesResult } from './modes.js';
import type { StorageClass } from './kube.js';

/** `vd-<name>-<uid>` / `vi-<name>-<uid>`, as the original names them (shortened to a valid name). */
export function pvcNameOf(prefix: 'vd' | 'vi', owner: KubeObject): string {
  return shortName([prefix, owner.metadata.name ?? '', owner.metadata.uid ?? ''], 253);
}

/** A claim of `size` (a quantity) on `storageClass` with `modes` (resolved through the class's StorageProfile), controlled by `owner`; filled from `dataSource` (a VolumeSnapshot) when given. */
export function diskPVC(owner: KubeObject, name: string, size: string, storageClass: string, modes: ClaimModes, dataSource?: PVC['spec']['dataSource']): PVC {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: owner.metadata.namespace,
      labels: { 'virtualization.deckhouse.io/owner-kind': owner.kind ?? '' },
      ownerReferences: [{ ...ownerReferenceTo(owner, { controller: true, blockOwnerDeletion: true }) }],
    },
    spec: {
      accessModes: [modes.accessMode],
      volumeMode: modes.volumeMode,
      storageClassName: storageClass,
      resources: { requests: { storage: size } },
      ...(dataSource !== undefined ? { dataSource } : {}),
    },
  };
}

/** The claim from the cache, created when missing. */
export async function ensurePVC(d: StorageDeps, want: PVC, signal: AbortSignal): Promise<PVC> {
  const key = objectKey(want.metadata);
  const cached = d.storage.caches.pvcs.get(key);
  if (cached !== undefined) return cached;
  try {
    return d.storage.caches.pvcs.remember(await d.storage.clients.pvcs.create(want, { signal }));
  } catch (err: unknown) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    return d.storage.caches.pvcs.remember(await d.storage.clients.pvcs.get({ namespace: want.metadata.namespace, name: want.metadata.name ?? '' }, { signal }));
  }
}

/**
 * The apiserver's message when a ResourceQuota refused a claim, first letter capitalized (the
 * original's shape), else undefined. Quota admission answers 403 Forbidden with `exceeded quota:` in
 * the message and no other mark (no reason or cause of its own), so the text is what tells it apart.
 */
export function quotaRejection(err: unknown): string | undefined {
  if (!(err instanceof KubeApiError) || err.status !== 403) return undefined;
  const m = err.serverMessage ?? '';
  return m.includes('exceeded quota') ? m.charAt(0).toUpperCase() + m.slice(1) : undefined;
}

interface QuotaState {
  readonly obj: { metadata: { generation?: number | undefined } };
  status: { phase?: string | undefined; conditions?: Condition[] | undefined };
}

/**
 * The object's claim, made if missing; a claim a ResourceQuota refuses leaves the object Pending with
 * a fresh Ready=False `QuotaExceeded` condition carrying the apiserver's message, and gives undefined
 * (looked at again after `DEPENDENCY_RECHECK_INTERVAL`, when the quota may have room).
 */
export async function ensurePVCWithinQuota(d: StorageDeps, s: QuotaState, ctx: { now: Date; signal: AbortSignal }, want: PVC): Promise<PVC | undefined> {
  try {
    return await ensurePVC(d, want, ctx.signal);
  } catch (err: unknown) {
    const message = quotaRejection(err);
    if (message === undefined) throw err;
    conditionOn(s, ctx, { type: 'Ready', status: 'False', reason: 'QuotaExceeded', message });
    s.status.phase = 'Pending';
    return undefined;
  }
}

/** The requested and the provisioned size of a claim. */
export function pvcSizes(pvc: PVC): { requested?: string | undefined; capacity?: string | undefined } {
  return { requested: pvc.spec.resources?.requests?.['storage'], capacity: pvc.status?.capacity?.['storage'] };
}

/** The modes of a new claim of `owner` on `cls`, resolved through the class's StorageProfile (from the cache). */
export function claimModesFor(d: StorageDeps, owner: KubeObject, cls: StorageClass): ModesResult {
  return resolveClaimModes(owner, cls, d.storage.caches.storageProfiles.get(cls.metadata.name ?? ''));
}
