/**
 * Snapshots: VirtualDiskSnapshot (vdsnapshot, vds: a VolumeSnapshot of a disk's PVC, optionally with
 * the guest filesystem frozen), VirtualMachineSnapshot (vmsnapshot, vms: snapshots of all disks of a
 * VM plus its spec), and VirtualMachineSnapshotOperation (vmsop: a new VM from a snapshot). The specs
 * cannot change once created (the original checks this in its webhooks; here a CEL transition rule).
 */
import { z } from 'zod';
import { AGE_COLUMN, type ResourceDefinition } from '../k8s/crd.js';
import { fieldForType, immutable, withRules } from '../k8s/schema.js';
import { API_VERSION, conditions, observedGeneration, rootSchema, publicNames } from './common.js';
import { CloneSchema, operationResourceShape } from './vmop.js';

export const SnapshotPhase = z.enum(['Pending', 'InProgress', 'Ready', 'Failed', 'Terminating']);

const requiredConsistency = (what: string) =>
  z.boolean().default(true).describe(`Take the snapshot only if ${what} can be made consistent: not in use, stopped, or frozen through the guest agent.`);

const consistent = z.boolean().optional().describe('Whether the snapshot is consistent (taken stopped or frozen).');
const phaseColumns = [
  { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  { name: 'Consistent', type: 'boolean', jsonPath: '.status.consistent' },
  AGE_COLUMN,
] as const;

export const VirtualDiskSnapshotSchema = rootSchema(
  API_VERSION,
  'VirtualDiskSnapshot',
  withRules(
    z.strictObject({
      virtualDiskName: z.string().min(1).describe('The VirtualDisk in the same namespace to snapshot.'),
      requiredConsistency: requiredConsistency('the disk'),
    }),
    [immutable('.spec is immutable')],
  ).describe('Which disk to snapshot; cannot be changed after creation.'),
  z
    .strictObject({
      phase: SnapshotPhase.optional().describe('Current phase of the snapshot.'),
      volumeSnapshotName: z.string().optional().describe('The VolumeSnapshot holding the data.'),
      consistent,
      conditions: conditions(),
      observedGeneration: observedGeneration(),
    })
    .describe('Observed state of the snapshot.'),
);
export type VirtualDiskSnapshot = z.infer<typeof VirtualDiskSnapshotSchema>;

export const VirtualMachineSnapshotSchema = rootSchema(
  API_VERSION,
  'VirtualMachineSnapshot',
  withRules(
    z.strictObject({
      virtualMachineName: z.string().min(1).describe('The VirtualMachine in the same namespace to snapshot.'),
      keepIPAddress: z
        .enum(['Always', 'Never'])
        .default('Always')
        .describe('Always: the VM address is made Static and kept in the snapshot; Never: it is not.'),
      requiredConsistency: requiredConsistency('the virtual machine'),
    }),
    [immutable('.spec is immutable')],
  ).describe('Which VM to snapshot; cannot be changed after creation.'),
  z
    .strictObject({
      phase: SnapshotPhase.describe('Current phase of the snapshot.'),
      consistent,
      virtualDiskSnapshotNames: z.array(z.string()).optional().describe('The VirtualDiskSnapshots taken of the VM disks.'),
      virtualMachineSnapshotSecretName: z.string().optional().describe('The Secret holding the VM spec and related objects.'),
      resources: z
        .array(
          z.strictObject({
            apiVersion: z.string().optional().describe('API version of the resource.'),
            kind: z.string().optional().describe('Kind of the resource.'),
            name: z.string().optional().describe('Name of the resource.'),
          }),
        )
        .optional()
        .describe('Resources captured in the snapshot.'),
      conditions: conditions(),
      observedGeneration: observedGeneration(),
    })
    .describe('Observed state of the snapshot.'),
);
export type VirtualMachineSnapshot = z.infer<typeof VirtualMachineSnapshotSchema>;

export const VirtualMachineSnapshotOperationSchema = rootSchema(
  API_VERSION,
  'VirtualMachineSnapshotOperation',
  withRules(
    z.strictObject({
      type: z.enum(['CreateVirtualMachine']).describe('CreateVirtualMachine: a new VM (and disks) from the snapshot.'),
      virtualMachineSnapshotName: z.string().min(1).describe('The VirtualMachineSnapshot in the same namespace.'),
      createVirtualMachine: CloneSchema.optional().describe('How the new VM and its resources are named, for type CreateVirtualMachine.'),
    }),
    [
      immutable('.spec is immutable'),
      {
        rule: "self.type != 'CreateVirtualMachine' || has(self.createVirtualMachine)",
        message: 'CreateVirtualMachine requires the createVirtualMachine field.',
        fieldPath: '.createVirtualMachine',
        reason: 'FieldValueRequired',
        holds: (s) => s.type !== 'CreateVirtualMachine' || s.createVirtualMachine !== undefined,
      },
      fieldForType('createVirtualMachine', 'CreateVirtualMachine', true),
    ],
  ).describe('The operation; immutable once created.'),
  z
    .strictObject({
      phase: z.enum(['Pending', 'InProgress', 'Completed', 'Failed', 'Terminating']).describe('Current phase of the operation.'),
      resources: z
        .array(z.strictObject({ ...operationResourceShape, message: z.string().describe('Details.') }))
        .optional()
        .describe('Resources created by the operation.'),
      conditions: conditions(),
      observedGeneration: observedGeneration(),
    })
    .describe('Observed state of the operation.'),
);
export type VirtualMachineSnapshotOperation = z.infer<typeof VirtualMachineSnapshotOperationSchema>;

export const virtualDiskSnapshot: ResourceDefinition<typeof VirtualDiskSnapshotSchema> = {
  ...publicNames('VirtualDiskSnapshot', 'virtualdisksnapshots', 'Namespaced', ['vdsnapshot', 'vds']),
  description: 'A snapshot of a virtual disk (a VolumeSnapshot of its PVC), usable as a data source of new disks and images.',
  schema: VirtualDiskSnapshotSchema,
  printerColumns: phaseColumns,
};

export const virtualMachineSnapshot: ResourceDefinition<typeof VirtualMachineSnapshotSchema> = {
  ...publicNames('VirtualMachineSnapshot', 'virtualmachinesnapshots', 'Namespaced', ['vmsnapshot', 'vms']),
  description: 'A snapshot of a virtual machine: snapshots of its disks and its configuration, for restore and clone.',
  schema: VirtualMachineSnapshotSchema,
  printerColumns: phaseColumns,
};

export const virtualMachineSnapshotOperation: ResourceDefinition<typeof VirtualMachineSnapshotOperationSchema> = {
  ...publicNames('VirtualMachineSnapshotOperation', 'virtualmachinesnapshotoperations', 'Namespaced', ['vmsop']),
  description: 'An operation on a virtual machine snapshot: create a new virtual machine from it.',
  schema: VirtualMachineSnapshotOperationSchema,
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Type', type: 'string', jsonPath: '.spec.type' },
    { name: 'VirtualMachineSnapshot', type: 'string', jsonPath: '.spec.virtualMachineSnapshotName' },
    AGE_COLUMN,
  ],
};
