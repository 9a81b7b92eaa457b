/**
 * VirtualImage (vi, namespaced) and ClusterVirtualImage (cvi, cluster-wide): disk images stored in
 * DVCR or on a PVC, used as VM boot sources, CD-ROMs and disk templates.
 */
import { z } from 'zod';
import { AGE_COLUMN, type PrinterColumn, type ResourceDefinition } from '../k8s/crd.js';
import { API_VERSION, BACKUP_LABELS, conditions, observedGeneration, rootSchema, publicNames } from './common.js';
import { ClusterVirtualImageDataSourceSchema, DownloadSpeedSchema, ImageUploadURLsSchema, VirtualImageDataSourceSchema } from './datasource.js';

const imageStatusShape = {
  cdrom: z.boolean().optional().describe('Whether the image is an ISO used as a CD-ROM.'),
  format: z.string().optional().describe('Image format (raw, qcow2, iso, ...).'),
  progress: z.string().optional().describe('Import progress in percent.'),
  downloadSpeed: DownloadSpeedSchema.optional(),
  size: z
    .strictObject({
      stored: z.string().optional().describe('Stored size, human readable.'),
      storedBytes: z.string().optional().describe('Stored size in bytes.'),
      unpacked: z.string().optional().describe('Unpacked size, human readable.'),
      unpackedBytes: z.string().optional().describe('Unpacked size in bytes.'),
    })
    .optional()
    .describe('Image sizes.'),
  imageUploadURLs: ImageUploadURLsSchema.optional(),
  uploadCommand: z.string().optional().describe('Deprecated: a command to upload the data.'),
  sourceUID: z.string().optional().describe('UID of the source object the data was copied from.'),
  conditions: conditions(),
  observedGeneration: observedGeneration(),
};

const registryURL = z.string().optional().describe('Image location in DVCR.');
const IMAGE_PHASES = ['Pending', 'Provisioning', 'WaitForUserUpload', 'Ready', 'Failed', 'Terminating', 'ImageLost'] as const;

export const VirtualImageSpecSchema = z
  .strictObject({
    storage: z
      .enum(['ContainerRegistry', 'Kubernetes', 'PersistentVolumeClaim'])
      .default('ContainerRegistry')
      .describe('Where the image is stored: DVCR, or a PVC (Kubernetes is a deprecated alias of PersistentVolumeClaim).'),
    persistentVolumeClaim: z
      .strictObject({ storageClassName: z.string().optional().describe('StorageClass of the PVC.') })
      .optional()
      .describe('PVC settings for PVC storage.'),
    dataSource: VirtualImageDataSourceSchema,
  })
  .describe('Desired state of the image.');

export const VirtualImageStatusSchema = z
  .strictObject({
    phase: z
      .enum([...IMAGE_PHASES, 'PVCLost'])
      .optional()
      .describe('Current phase of the image.'),
    ...imageStatusShape,
    target: z
      .strictObject({
        registryURL,
        persistentVolumeClaimName: z.string().optional().describe('PVC holding the image.'),
      })
      .optional()
      .describe('Where the image is stored.'),
    storageClassName: z.string().optional().describe('StorageClass of the PVC.'),
  })
  .describe('Observed state of the image.');

export const VirtualImageSchema = rootSchema(API_VERSION, 'VirtualImage', VirtualImageSpecSchema, VirtualImageStatusSchema);
export type VirtualImage = z.infer<typeof VirtualImageSchema>;

export const ClusterVirtualImageSpecSchema = z.strictObject({ dataSource: ClusterVirtualImageDataSourceSchema }).describe('Desired state of the image.');

export const ClusterVirtualImageStatusSchema = z
  .strictObject({
    phase: z.enum(IMAGE_PHASES).optional().describe('Current phase of the image.'),
    ...imageStatusShape,
    target: z.strictObject({ registryURL }).optional().describe('Where the image is stored.'),
    usedInNamespaces: z.array(z.string()).optional().describe('Namespaces whose VMs use the image.'),
  })
  .describe('Observed state of the image.');

export const ClusterVirtualImageSchema = rootSchema(API_VERSION, 'ClusterVirtualImage', ClusterVirtualImageSpecSchema, ClusterVirtualImageStatusSchema);
export type ClusterVirtualImage = z.infer<typeof ClusterVirtualImageSchema>;

const imageColumns: PrinterColumn[] = [
  { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  { name: 'CDROM', type: 'boolean', jsonPath: '.status.cdrom' },
  { name: 'Progress', type: 'string', jsonPath: '.status.progress' },
  { name: 'StoredSize', type: 'string', jsonPath: '.status.size.stored', priority: 1 },
  { name: 'UnpackedSize', type: 'string', jsonPath: '.status.size.unpacked', priority: 1 },
  { name: 'Registry URL', type: 'string', jsonPath: '.status.target.registryURL', priority: 1 },
];

export const virtualImage: ResourceDefinition<typeof VirtualImageSchema> = {
  ...publicNames('VirtualImage', 'virtualimages', 'Namespaced', ['vi']),
  description: 'A disk image in a namespace, stored in DVCR or on a PVC.',
  schema: VirtualImageSchema,
  printerColumns: [...imageColumns, { name: 'TargetPVC', type: 'string', jsonPath: '.status.target.persistentVolumeClaimName', priority: 1 }, AGE_COLUMN],
};

export const clusterVirtualImage: ResourceDefinition<typeof ClusterVirtualImageSchema> = {
  ...publicNames('ClusterVirtualImage', 'clustervirtualimages', 'Cluster', ['cvi']),
  description: 'A disk image available to every namespace, stored in DVCR.',
  schema: ClusterVirtualImageSchema,
  labels: BACKUP_LABELS,
  printerColumns: [...imageColumns, AGE_COLUMN],
};
