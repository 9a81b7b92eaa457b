/** VirtualMachineBlockDeviceAttachment (vmbda): hot-plugs a disk or image into a running VM. */
import { z } from 'zod';
import type { ResourceDefinition } from '../k8s/crd.js';
import { API_VERSION, conditions, observedGeneration, rootSchema, publicNames } from './common.js';

export const VirtualMachineBlockDeviceAttachmentSpecSchema = z
  .strictObject({
    blockDeviceRef: z
      .strictObject({
        kind: z.enum(['VirtualDisk', 'VirtualImage', 'ClusterVirtualImage']).describe('Kind of the block device.'),
        name: z.string().min(1).describe('Name of the block device.'),
      })
      .describe('The block device to attach.'),
    virtualMachineName: z.string().min(1).describe('The VM to attach the device to, in the same namespace.'),
  })
  .describe('Which device to attach to which VM.');

export const VirtualMachineBlockDeviceAttachmentStatusSchema = z
  .strictObject({
    phase: z.enum(['Pending', 'InProgress', 'Attached', 'Failed', 'Terminating']).optional().describe('Current phase of the attachment.'),
    virtualMachineName: z.string().optional().describe('The VM the device is attached to.'),
    conditions: conditions(),
    observedGeneration: observedGeneration(),
  })
  .describe('Observed state of the attachment.');

export const VirtualMachineBlockDeviceAttachmentSchema = rootSchema(
  API_VERSION,
  'VirtualMachineBlockDeviceAttachment',
  VirtualMachineBlockDeviceAttachmentSpecSchema,
  VirtualMachineBlockDeviceAttachmentStatusSchema,
);
export type VirtualMachineBlockDeviceAttachment = z.infer<typeof VirtualMachineBlockDeviceAttachmentSchema>;

export const virtualMachineBlockDeviceAttachment: ResourceDefinition<typeof VirtualMachineBlockDeviceAttachmentSchema> = {
  ...publicNames('VirtualMachineBlockDeviceAttachment', 'virtualmachineblockdeviceattachments', 'Namespaced', ['vmbda']),
  description: 'Attaches a VirtualDisk, VirtualImage or ClusterVirtualImage to a running virtual machine.',
  schema: VirtualMachineBlockDeviceAttachmentSchema,
  printerColumns: [
    { name: 'PHASE', type: 'string', jsonPath: '.status.phase' },
    { name: 'BLOCKDEVICE KIND', type: 'string', jsonPath: '.spec.blockDeviceRef.kind', priority: 1 },
    { name: 'BLOCKDEVICE NAME', type: 'string', jsonPath: '.spec.blockDeviceRef.name', priority: 1 },
    { name: 'VIRTUALMACHINE', type: 'string', jsonPath: '.status.virtualMachineName' },
    { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};
