/** VirtualMachineOperation (vmop): an imperative action on a VM (start, stop, migrate, restore, clone). */
import { z } from 'zod';
import { AGE_COLUMN, type ResourceDefinition } from '../k8s/crd.js';
import { fieldForType, has, immutable, stringMap, withRules } from '../k8s/schema.js';
import { API_VERSION, conditions, observedGeneration, rootSchema, publicNames } from './common.js';

export const OperationType = z.enum(['Restart', 'Start', 'Stop', 'Migrate', 'Evict', 'Restore', 'Clone']);
export const SnapshotMode = z.enum(['DryRun', 'Strict', 'BestEffort']);

const NAME_AFFIX_MAX = 59;

/** A name prefix, suffix or replacement: 1 to 59 characters (`message` as the original words it). */
const nameFragment = (what: string, message: string) =>
  withRules(z.string().describe(what), [
    {
      rule: `size(self) >= 1 && size(self) <= ${NAME_AFFIX_MAX}`,
      message,
      holds: (s) => [...s].length >= 1 && [...s].length <= NAME_AFFIX_MAX,
    },
  ]);

export const CloneSchema = withRules(
  z.strictObject({
    mode: SnapshotMode.describe('DryRun: only report conflicts; Strict: fail on any; BestEffort: skip what conflicts.'),
    customization: z
      .strictObject({
        namePrefix: nameFragment(
          'Prefix added to the names of the cloned resources.',
          `namePrefix length must be between 1 and ${NAME_AFFIX_MAX} characters if set`,
        ).optional(),
        nameSuffix: nameFragment(
          'Suffix added to the names of the cloned resources.',
          `nameSuffix length must be between 1 and ${NAME_AFFIX_MAX} characters if set`,
        ).optional(),
      })
      .optional()
      .describe('How names of the cloned resources are derived.'),
    nameReplacement: z
      .array(
        z.strictObject({
          from: z
            .strictObject({
              kind: z.string().optional().describe('Kind of the resource to rename; any when empty.'),
              name: z.string().min(1).describe('Current name.'),
            })
            .describe('The resource to rename.'),
          to: nameFragment('New name.', `Each nameReplacement.to must be between 1 and ${NAME_AFFIX_MAX} characters`),
        }),
      )
      .optional()
      .describe('Explicit new names of cloned resources.'),
  }),
  [
    {
      rule:
        '(has(self.customization) && (has(self.customization.namePrefix) || has(self.customization.nameSuffix))) || ' +
        '(has(self.nameReplacement) && size(self.nameReplacement) > 0)',
      message: 'At least one of customization.namePrefix, customization.nameSuffix, or nameReplacement must be set',
      holds: (s) => has(s.customization, 'namePrefix') || has(s.customization, 'nameSuffix') || (s.nameReplacement?.length ?? 0) > 0,
    },
  ],
).describe('Clone settings for type Clone.');

export const VirtualMachineOperationSpecSchema = withRules(
  z.strictObject({
    type: OperationType.describe('The operation to perform.'),
    virtualMachineName: z.string().min(1).describe('The VM in the same namespace.'),
    force: z.boolean().optional().describe('Skip the graceful path (e.g. power off instead of shut down).'),
    migrate: z
      .strictObject({ nodeSelector: stringMap().optional().describe('Labels the target node must have.') })
      .optional()
      .describe('Migration settings for type Migrate.'),
    restore: z
      .strictObject({
        mode: SnapshotMode.describe('DryRun: only report conflicts; Strict: fail on any; BestEffort: skip what conflicts.'),
        virtualMachineSnapshotName: z.string().min(1).describe('The snapshot to restore from.'),
      })
      .optional()
      .describe('Restore settings for type Restore.'),
    clone: CloneSchema.optional(),
  }),
  [
    immutable('.spec is immutable'),
    {
      rule: "self.type != 'Start' || !has(self.force) || !self.force",
      message: 'The `Start` operation cannot be performed forcibly.',
      fieldPath: '.force',
      reason: 'FieldValueForbidden',
      holds: (s) => s.type !== 'Start' || s.force !== true,
    },
    {
      rule: "self.type != 'Restore' || has(self.restore)",
      message: 'Restore requires restore field.',
      fieldPath: '.restore',
      reason: 'FieldValueRequired',
      holds: (s) => s.type !== 'Restore' || s.restore !== undefined,
    },
    {
      rule: "self.type != 'Clone' || has(self.clone)",
      message: 'Clone requires clone field.',
      fieldPath: '.clone',
      reason: 'FieldValueRequired',
      holds: (s) => s.type !== 'Clone' || s.clone !== undefined,
    },
    fieldForType('migrate', 'Migrate', true),
  ],
).describe('The operation; immutable once created.');

/** A resource an operation (VMOP, VMSOP) restored, cloned or created, and what happened to it. */
export const operationResourceShape = {
  apiVersion: z.string().describe('API version of the resource.'),
  kind: z.string().describe('Kind of the resource.'),
  name: z.string().describe('Name of the resource.'),
  status: z.enum(['InProgress', 'Completed', 'Failed']).describe('What happened to the resource.'),
};

export const VirtualMachineOperationStatusSchema = z
  .strictObject({
    phase: z.enum(['Pending', 'InProgress', 'Completed', 'Failed', 'Terminating', 'Superseded']).describe('Current phase of the operation.'),
    progress: z.string().optional().describe('Progress in percent, e.g. 33%.'),
    resources: z
      .array(z.strictObject({ ...operationResourceShape, message: z.string().optional().describe('Details.') }))
      .optional()
      .describe('Resources restored or cloned by the operation.'),
    conditions: conditions(),
    observedGeneration: observedGeneration(),
  })
  .describe('Observed state of the operation.');

export const VirtualMachineOperationSchema = rootSchema(
  API_VERSION,
  'VirtualMachineOperation',
  VirtualMachineOperationSpecSchema,
  VirtualMachineOperationStatusSchema,
);
export type VirtualMachineOperation = z.infer<typeof VirtualMachineOperationSchema>;

export const virtualMachineOperation: ResourceDefinition<typeof VirtualMachineOperationSchema> = {
  ...publicNames('VirtualMachineOperation', 'virtualmachineoperations', 'Namespaced', ['vmop']),
  description: 'An operation on a virtual machine: start, stop, restart, migrate, evict, restore or clone.',
  schema: VirtualMachineOperationSchema,
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Progress', type: 'string', jsonPath: '.status.progress' },
    { name: 'Type', type: 'string', jsonPath: '.spec.type' },
    { name: 'VirtualMachine', type: 'string', jsonPath: '.spec.virtualMachineName' },
    AGE_COLUMN,
  ],
};
