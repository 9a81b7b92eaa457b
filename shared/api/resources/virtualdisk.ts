/** VirtualDisk (vd): a disk backed by a PersistentVolumeClaim, blank or filled from a data source. */
import { z } from 'zod';
import { AGE_COLUMN, conditionColumn, type ResourceDefinition } from '../k8s/crd.js';
import { dateTime, quantity } from '../k8s/schema.js';
import { API_VERSION, conditions, observedGeneration, rootSchema, publicNames } from './common.js';
import { DownloadSpeedSchema, ImageUploadURLsSchema, PoolDiskDataSourceSchema, VirtualDiskDataSourceSchema } from './datasource.js';

const diskSpecSchema = <D extends z.ZodType>(dataSource: D) =>
  z
    .strictObject({
      dataSource: dataSource.optional(),
      persistentVolumeClaim: z
        .strictObject({
          size: quantity().optional().describe('Disk size; required for a blank disk, at least the image size otherwise.'),
          storageClassName: z.string().optional().describe('StorageClass of the PVC; the default class when empty.'),
        })
        .optional()
        .describe('The PersistentVolumeClaim that stores the disk.'),
    })
    .describe('Desired state of the disk; without dataSource the disk is blank.');

export const VirtualDiskSpecSchema = diskSpecSchema(VirtualDiskDataSourceSchema);

/** The disk spec of a pool's disk template: the original's pool data source (datasource.ts); every such spec is a valid VirtualDisk spec. */
export const PoolVirtualDiskSpecSchema = diskSpecSchema(PoolDiskDataSourceSchema);

export const VirtualDiskPhase = z.enum([
  'Pending',
  'Provisioning',
  'WaitForUserUpload',
  'WaitForFirstConsumer',
  'Ready',
  'Resizing',
  'Failed',
  'PVCLost',
  'Exporting',
  'Terminating',
  'Migrating',
]);

export const VirtualDiskStatusSchema = z
  .strictObject({
    phase: VirtualDiskPhase.optional().describe('Current phase of the disk.'),
    capacity: z.string().optional().describe('Provisioned size of the disk.'),
    progress: z.string().optional().describe('Import progress in percent.'),
    downloadSpeed: DownloadSpeedSchema.optional(),
    imageUploadURLs: ImageUploadURLsSchema.optional(),
    uploadCommand: z.string().optional().describe('Deprecated: a command to upload the data.'),
    target: z
      .strictObject({ persistentVolumeClaimName: z.string().optional().describe('Name of the PVC.') })
      .optional()
      .describe('Where the disk is stored.'),
    storageClassName: z.string().optional().describe('StorageClass of the PVC.'),
    sourceUID: z.string().optional().describe('UID of the source object the data was copied from.'),
    attachedToVirtualMachines: z
      .array(
        z.strictObject({
          name: z.string().describe('VirtualMachine name.'),
          mounted: z.boolean().optional().describe('Whether the VM currently uses the disk.'),
        }),
      )
      .optional()
      .describe('Virtual machines the disk is attached to.'),
    migrationState: z
      .strictObject({
        sourcePVC: z.string().optional().describe('PVC the data moves from.'),
        targetPVC: z.string().optional().describe('PVC the data moves to.'),
        result: z.enum(['Succeeded', 'Failed']).optional().describe('Result of the last volume migration.'),
        message: z.string().optional().describe('Details of the result.'),
        startTimestamp: dateTime().optional().describe('When the migration started.'),
        endTimestamp: dateTime().optional().describe('When the migration ended.'),
      })
      .optional()
      .describe('State of the last storage migration.'),
    stats: z
      .strictObject({
        creationDuration: z
          .strictObject({
            waitingForDependencies: z.string().optional().describe('Time waiting for the data source.'),
            dvcrProvisioning: z.string().optional().describe('Time importing into DVCR.'),
            totalProvisioning: z.string().optional().describe('Total provisioning time.'),
            waitingForFirstConsumer: z.string().optional().describe('Time waiting for a VM to use the disk.'),
          })
          .optional()
          .describe('Provisioning timings.'),
      })
      .optional()
      .describe('Statistics.'),
    conditions: conditions(),
    observedGeneration: observedGeneration(),
  })
  .describe('Observed state of the disk.');

export const VirtualDiskSchema = rootSchema(API_VERSION, 'VirtualDisk', VirtualDiskSpecSchema, VirtualDiskStatusSchema);
export type VirtualDisk = z.infer<typeof VirtualDiskSchema>;

export const virtualDisk: ResourceDefinition<typeof VirtualDiskSchema> = {
  ...publicNames('VirtualDisk', 'virtualdisks', 'Namespaced', ['vd']),
  description: 'A virtual disk backed by a PersistentVolumeClaim: blank, imported, uploaded or copied.',
  schema: VirtualDiskSchema,
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Capacity', type: 'string', jsonPath: '.status.capacity' },
    conditionColumn('InUse', 'InUse', 1),
    { name: 'VirtualMachine', type: 'string', jsonPath: '.status.attachedToVirtualMachines[?(@.mounted==true)].name' },
    { name: 'Progress', type: 'string', jsonPath: '.status.progress', priority: 1 },
    { name: 'StorageClass', type: 'string', jsonPath: '.status.storageClassName', priority: 1 },
    { name: 'TargetPVC', type: 'string', jsonPath: '.status.target.persistentVolumeClaimName', priority: 1 },
    AGE_COLUMN,
  ],
};
