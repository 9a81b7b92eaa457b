/**
 * StorageProfile (`storage.virtualization.deckhouse.io/v1alpha1`, cluster-wide): one per StorageClass,
 * named after it, kept by the controller. Its status states the claim property sets (access modes and
 * a volume mode) that disks and images on PVC of that class are made with; a user may set them in the
 * spec, and the controller then takes the spec's sets. Names and fields as the original module's.
 */
import { z } from 'zod';
import { AGE_COLUMN, type ResourceDefinition } from '../k8s/crd.js';
import { rootSchema } from './common.js';

export const STORAGE_GROUP = 'storage.virtualization.deckhouse.io';
export const STORAGE_VERSION = 'v1alpha1';
export const STORAGE_API_VERSION = `${STORAGE_GROUP}/${STORAGE_VERSION}`;

export const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'] as const;
export const VOLUME_MODES = ['Block', 'Filesystem'] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];
export type VolumeMode = (typeof VOLUME_MODES)[number];

export const ClaimPropertySetSchema = z
  .strictObject({
    accessModes: z
      .array(z.enum(ACCESS_MODES).describe('An access mode of a PersistentVolumeClaim.'))
      .max(4)
      .describe('The access modes the volume should have (ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod).'),
    volumeMode: z.enum(VOLUME_MODES).describe('What type of volume the claim asks for: Block or Filesystem.'),
  })
  .describe('A set of properties applicable to a PersistentVolumeClaim.');
export type ClaimPropertySet = z.infer<typeof ClaimPropertySetSchema>;

const claimPropertySets = (what: string) => z.array(ClaimPropertySetSchema).max(8).optional().describe(what);
const text = (what: string) => z.string().optional().describe(what);

const common = {
  cloneStrategy: text('The preferred method for cloning a volume (copy, snapshot, csi-clone).'),
  dataImportCronSourceFormat: text('The format of disk image sources made by a DataImportCron (kept for compatibility).'),
  snapshotClass: text('A VolumeSnapshotClass for the snapshot clone strategy; unset: one is chosen by the provisioner.'),
};

export const StorageProfileSchema = rootSchema(
  STORAGE_API_VERSION,
  'StorageProfile',
  z
    .strictObject({
      ...common,
      claimPropertySets: claimPropertySets('Claim property sets set by a user; when given, they replace the ones found for the provisioner.'),
    })
    .describe('What a user asks of the class: claim property sets and the clone strategy.'),
  z
    .strictObject({
      ...common,
      claimPropertySets: claimPropertySets("The claim property sets in force: the spec's, else the ones known for the provisioner."),
      provisioner: text('The provisioner of the StorageClass.'),
      storageClass: text('The StorageClass the profile describes.'),
    })
    .describe('The profile in force, computed by the controller.'),
);
export type StorageProfile = z.infer<typeof StorageProfileSchema>;

export const storageProfile: ResourceDefinition<typeof StorageProfileSchema> = {
  group: STORAGE_GROUP,
  version: STORAGE_VERSION,
  kind: 'StorageProfile',
  plural: 'storageprofiles',
  singular: 'storageprofile',
  scope: 'Cluster',
  description: 'Storage capability recommendations for a StorageClass: the claim properties disks and images on PVC use.',
  schema: StorageProfileSchema,
  printerColumns: [
    { name: 'Provisioner', type: 'string', jsonPath: '.status.provisioner' },
    { name: 'VolumeMode', type: 'string', jsonPath: '.status.claimPropertySets[0].volumeMode' },
    AGE_COLUMN,
  ],
  // As the original's CRD: no /status subresource; the controller writes status with the object.
  statusSubresource: false,
};
