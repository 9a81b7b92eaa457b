/** The StorageProfile a StorageClass should have, and the status a profile should show. Pure. */
import { STORAGE_API_VERSION, type StorageProfile } from '../../../../shared/api/resources/storageprofile.js';
import type { StorageClass } from '../provisioning/kube.js';
import { detectedSets } from './capabilities.js';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'virtualization-controller';

type Status = NonNullable<StorageProfile['status']>;

/** The status in force: the spec's claim property sets when it names some, else the provisioner's. */
export function profileStatus(cls: StorageClass, spec: StorageProfile['spec']): Status {
  const sets = spec.claimPropertySets !== undefined && spec.claimPropertySets.length > 0 ? spec.claimPropertySets : detectedSets(cls.provisioner);
  return {
    storageClass: cls.metadata.name ?? '',
    provisioner: cls.provisioner,
    claimPropertySets: sets,
    cloneStrategy: spec.cloneStrategy ?? 'copy',
    dataImportCronSourceFormat: spec.dataImportCronSourceFormat ?? 'pvc',
    ...(spec.snapshotClass !== undefined ? { snapshotClass: spec.snapshotClass } : {}),
  };
}

/** A new profile for `cls`: empty spec, its status, the managed-by label (and the class's labels, so a scoped reader sees both). */
export function newProfile(cls: StorageClass): StorageProfile {
  return {
    apiVersion: STORAGE_API_VERSION,
    kind: 'StorageProfile',
    metadata: { name: cls.metadata.name ?? '', labels: { ...cls.metadata.labels, [MANAGED_BY_LABEL]: MANAGED_BY } },
    spec: {},
    status: profileStatus(cls, {}),
  };
}
