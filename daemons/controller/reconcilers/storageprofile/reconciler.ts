/**
 * StorageProfile (key: the StorageClass name): made when a class appears, deleted when it goes, its
 * status kept equal to `profileStatus` (the spec's claim property sets when a user set some, else the
 * provisioner's). The profile has no /status subresource (as the original's): status is written with a
 * merge patch on the object, conditional on the resourceVersion it was decided on.
 */
import type { StorageProfile } from '../../../../shared/api/resources/storageprofile.js';
import { AlreadyExistsError, NotFoundError } from '../../../../shared/errors/index.js';
import { conditionalMergePatch } from '../../../../shared/kube/index.js';
import { deepEqual } from '../../engine/merge-diff.js';
import type { ReconcileFn } from '../../engine/runner.js';
import type { StorageDeps } from '../provisioning/helpers.js';
import { newProfile, profileStatus } from './profile.js';

export function storageProfileReconciler(d: StorageDeps): ReconcileFn {
  const { clients, caches } = d.storage;
  return async (name, signal) => {
    const cls = caches.storageClasses.get(name);
    const profile = caches.storageProfiles.get(name);
    if (cls === undefined || cls.metadata.deletionTimestamp !== undefined) {
      if (profile === undefined) return;
      try {
        await clients.storageProfiles.delete({ name }, { signal, preconditions: { uid: profile.metadata.uid } });
      } catch (err: unknown) {
        if (!(err instanceof NotFoundError)) throw err;
      }
      caches.storageProfiles.forget(name);
      return;
    }
    if (profile === undefined) {
      try {
        caches.storageProfiles.remember(await clients.storageProfiles.create(newProfile(cls), { signal }));
      } catch (err: unknown) {
        // Another writer (a second controller) made it first: its event brings the profile here again.
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
      return;
    }
    const want = profileStatus(cls, profile.spec);
    if (deepEqual(profile.status, want)) return;
    const patch = conditionalMergePatch({ status: { ...nulls(profile.status), ...want } }, profile.metadata.resourceVersion);
    caches.storageProfiles.remember(await clients.storageProfiles.mergePatch({ name }, patch, { signal }));
  };
}

/** Every field of the old status as null, so a merge patch drops what the new status no longer has. */
function nulls(status: StorageProfile['status']): Record<string, null> {
  return Object.fromEntries(Object.keys(status ?? {}).map((k) => [k, null]));
}
