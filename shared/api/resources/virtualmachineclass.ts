/** VirtualMachineClass (vmc, vmclass): CPU model, node placement and sizing policies for VMs. */
import { z } from 'zod';
import { AGE_COLUMN, type ResourceDefinition } from '../k8s/crd.js';
import { LabelSelectorSchema, TolerationSchema } from '../k8s/core.js';
import { fieldForType, immutable, int32, quantity, withRules } from '../k8s/schema.js';
import { API_VERSION, BACKUP_LABELS, GROUP, conditions, observedGeneration, rootSchema, publicNames } from './common.js';

/** Annotation that marks the class used when a VM names none. */
export const DEFAULT_CLASS_ANNOTATION = 'virtualmachineclass.virtualization.deckhouse.io/is-default-class';

export const CpuType = z.enum(['Host', 'HostPassthrough', 'Discovery', 'Model', 'Features']);

const CpuSchema = withRules(
  z.strictObject({
    type: CpuType.describe(
      'Host: the host CPU model; HostPassthrough: the physical CPU as is; Discovery: the common features of ' +
        'the selected nodes; Model: a named model; Features: a generic model with the listed features.',
    ),
    model: z.string().optional().describe('CPU model name for type Model.'),
    features: z.array(z.string()).min(1).optional().describe('Required CPU features for type Features.'),
    discovery: z
      .strictObject({ nodeSelector: LabelSelectorSchema.optional().describe('Nodes whose common features are used.') })
      .optional()
      .describe('Node selection for type Discovery.'),
  }),
  [immutable('.spec.cpu is immutable'), fieldForType('model', 'Model'), fieldForType('features', 'Features'), fieldForType('discovery', 'Discovery', true)],
).describe('Virtual CPU model; cannot be changed after creation.');

const CoresSchema = withRules(
  z.strictObject({
    min: int32().min(1).describe('Smallest core count of the policy.'),
    max: int32().max(1024).describe('Largest core count of the policy.'),
    step: int32().min(1).optional().describe('Allowed core counts go from min in steps of step.'),
  }),
  [
    { rule: 'self.max > self.min', message: 'The maximum must be greater than the minimum', fieldPath: '.max', holds: (s) => s.max > s.min },
    {
      rule: '!has(self.step) || self.max > self.step',
      message: 'The maximum must be greater than the step',
      fieldPath: '.step',
      holds: (s) => s.step === undefined || s.max > s.step,
    },
  ],
).describe('Core range the policy covers.');

const memoryRange = {
  min: quantity().optional().describe('Minimum memory.'),
  max: quantity().optional().describe('Maximum memory.'),
};

const sizingPolicyShape = {
  cores: CoresSchema,
  memory: z
    .strictObject({
      ...memoryRange,
      step: quantity().optional().describe('Allowed sizes go from min in steps of step.'),
      perCore: z.strictObject(memoryRange).optional().describe('Memory range per core.'),
    })
    .optional()
    .describe('Allowed memory for VMs in the core range.'),
  dedicatedCores: z.array(z.boolean()).optional().describe('Whether dedicated cores are allowed.'),
};

const SizingPolicySchema = z.strictObject({
  ...sizingPolicyShape,
  coreFractions: z.array(int32().min(1).max(100)).optional().describe('Allowed core fractions in percent.'),
  defaultCoreFraction: withRules(z.union([z.int(), z.string()]).meta({ 'x-kubernetes-int-or-string': true }), [
    {
      rule: "type(self) == string ? self == 'Auto' : (self >= 1 && self <= 100)",
      message: 'defaultCoreFraction must be a percentage from 1 to 100 or Auto',
      holds: (s) => (typeof s === 'string' ? s === 'Auto' : s >= 1 && s <= 100),
    },
  ])
    .optional()
    .describe('Core fraction given to VMs that set none: 1-100 or Auto.'),
});

/** v1alpha3 writes core fractions as percent strings. */
const SizingPolicyV1alpha3Schema = z.strictObject({
  ...sizingPolicyShape,
  coreFractions: z
    .array(z.string().regex(/^(100|[1-9][0-9]?)%$/, 'must be a percentage from 1% to 100%'))
    .optional()
    .describe('Allowed core fractions, e.g. "5%", "100%".'),
  defaultCoreFraction: z
    .string()
    .regex(/^(Auto|(100|[1-9][0-9]?)%)$/, 'must be Auto or a percentage from 1% to 100%')
    .optional()
    .describe('Core fraction given to VMs that set none: a percentage or Auto.'),
});

const classSpec = <P extends z.ZodType>(policy: P) =>
  z
    .strictObject({
      cpu: CpuSchema,
      nodeSelector: LabelSelectorSchema.optional().describe('Nodes the VMs of the class may run on.'),
      tolerations: z.array(TolerationSchema).optional().describe('Taints the VMs of the class tolerate.'),
      sizingPolicies: z.array(policy).max(16).optional().describe('Allowed cores, memory and core fractions, by core range.'),
    })
    .describe('Desired state of the class.');

export const VirtualMachineClassSpecSchema = classSpec(SizingPolicySchema);
export const VirtualMachineClassV1alpha3SpecSchema = classSpec(SizingPolicyV1alpha3Schema);

export const VirtualMachineClassStatusSchema = z
  .strictObject({
    phase: z.enum(['Pending', 'Ready', 'Terminating']).describe('Current phase of the class.'),
    availableNodes: z.array(z.string()).optional().describe('Nodes where VMs of the class can run.'),
    cpuFeatures: z
      .strictObject({
        enabled: z.array(z.string()).optional().describe('CPU features presented to the guests.'),
        notEnabledCommon: z.array(z.string()).optional().describe('Features common to the nodes but not enabled.'),
      })
      .optional()
      .describe('CPU features of the class.'),
    maxAllocatableResources: z.record(z.string(), quantity()).optional().describe('Largest resources on one node.'),
    conditions: conditions(),
    observedGeneration: observedGeneration(),
  })
  .describe('Observed state of the class.');

export const VirtualMachineClassSchema = rootSchema(API_VERSION, 'VirtualMachineClass', VirtualMachineClassSpecSchema, VirtualMachineClassStatusSchema);
export type VirtualMachineClass = z.infer<typeof VirtualMachineClassSchema>;

export const VirtualMachineClassV1alpha3Schema = rootSchema(
  `${GROUP}/v1alpha3`,
  'VirtualMachineClass',
  VirtualMachineClassV1alpha3SpecSchema,
  VirtualMachineClassStatusSchema,
);
export type VirtualMachineClassV1alpha3 = z.infer<typeof VirtualMachineClassV1alpha3Schema>;

/** The path of the conversion webhook on the admission function (Service admission-webhook). */
export const CONVERSION_PATH = '/convert';

export const virtualMachineClass: ResourceDefinition<typeof VirtualMachineClassSchema> = {
  ...publicNames('VirtualMachineClass', 'virtualmachineclasses', 'Cluster', ['vmc', 'vmclass']),
  description: 'A class of virtual machines: CPU model, allowed nodes and sizing policies.',
  schema: VirtualMachineClassSchema,
  labels: BACKUP_LABELS,
  // v1alpha2 stays the storage version, as in the original: objects are stored as the original stores
  // them, and v1alpha2 clients (our controller among them) need no conversion call.
  otherVersions: [{ name: 'v1alpha3', schema: VirtualMachineClassV1alpha3Schema }],
  deprecationWarning: 'v1alpha2.VirtualMachineClass is deprecated; use v1alpha3.VirtualMachineClass',
  conversion: { service: 'admission-webhook', path: CONVERSION_PATH, caFromSecret: 'admission-tls' },
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'IsDefault', type: 'string', jsonPath: `.metadata.annotations.${DEFAULT_CLASS_ANNOTATION.replaceAll('.', '\\.')}` },
    AGE_COLUMN,
  ],
};
