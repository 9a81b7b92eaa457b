/** The PersistentVolumeClaims that hold disks and PVC-stored images. */
import { AlreadyExistsError } from '../../../../shared/errors/index.js';
import { ownerReferenceTo, type KubeObject, objectKey } from '../../../../shared/kube/index.js';
import { shortName } from './importer.js';
import type { StorageDeps } from './helpers.js';
import type { PVC } from './kube.js';

/** `vd-<name>-<uid>` / `vi-<name>-<uid>`, as the original names them (shortened to a valid name). */
export function pvcNameOf(prefix: 'vd' | 'vi', owner: KubeObject): string {
  return shortName([prefix, owner.metadata.name ?? '', owner.metadata.uid ?? ''], 253);
}

/** A filesystem-mode claim of `size` (a quantity) on `storageClass`, controlled by `owner`; filled from `dataSource` (a VolumeSnapshot) when given. */
export function diskPVC(owner: KubeObject, name: string, size: string, storageClass: string, dataSource?: PVC['spec']['dataSource']): PVC {
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
      accessModes: ['ReadWriteOnce'],
      volumeMode: 'Filesystem',
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

/** The requested and the provisioned size of a claim. */
export function pvcSizes(pvc: PVC): { requested?: string | undefined; capacity?: string | undefined } {
  return { requested: pvc.spec.resources?.requests?.['storage'], capacity: pvc.status?.capacity?.['storage'] };
}
