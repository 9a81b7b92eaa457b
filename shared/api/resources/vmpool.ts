/** VirtualMachinePool (vmpool): a scalable set of identical VMs, each with disks made from templates. */
import { z } from 'zod';
import { AGE_COLUMN, type ResourceDefinition } from '../k8s/crd.js';
import { ConditionSchema } from '../k8s/core.js';
import { DNS1123_LABEL, int32, listMap, stringMap, withRules } from '../k8s/schema.js';
import { API_VERSION, observedGeneration, rootSchema, publicNames } from './common.js';
import { PoolVirtualDiskSpecSchema } from './virtualdisk.js';
import { PoolVirtualMachineSpecSchema } from './virtualmachine-spec.js';

const ReclaimSchema = withRules(
  z.strictObject({
    onScaleDown: z.enum(['Delete', 'Retain']).default('Delete').describe('What happens to the disk when its VM is removed by a scale-down.'),
    keep: int32().min(0).default(0).describe('How many retained disks to keep (Retain only).'),
    ttl: z.string().optional().describe('How long a retained disk is kept (Retain only), e.g. 24h.'),
  }),
  [
    {
      rule: "self.onScaleDown == 'Retain' || (self.keep == 0 && !has(self.ttl))",
      message: 'keep and ttl are only valid with onScaleDown: Retain',
      reason: 'FieldValueForbidden',
      holds: (s) => s.onScaleDown === 'Retain' || (s.keep === 0 && s.ttl === undefined),
    },
    {
      rule: 'self.keep == 0 || has(self.ttl)',
      message: 'keep requires ttl; without ttl free disks are never garbage-collected, so keep would have no effect',
      fieldPath: '.ttl',
      reason: 'FieldValueRequired',
      holds: (s) => s.keep === 0 || s.ttl !== undefined,
    },
  ],
).describe('What happens to disks made from this template when the pool shrinks.');

const DiskTemplateSchema = z.strictObject({
  name: z.string().max(63).regex(DNS1123_LABEL).describe('Template name; referenced from blockDeviceRefs.'),
  reclaim: ReclaimSchema.optional(),
  spec: PoolVirtualDiskSpecSchema,
});

const refsPath = 'self.virtualMachineTemplate.spec.blockDeviceRefs';

export const VirtualMachinePoolSpecSchema = withRules(
  z.strictObject({
    replicas: int32().min(0).optional().describe('Number of VMs; written through the scale subresource.'),
    scaleDownPolicy: z.enum(['NewestFirst', 'OldestFirst', 'Explicit']).describe('Which VMs are removed on scale-down; Explicit: only VMs the user deletes.'),
    virtualDiskTemplates: listMap(DiskTemplateSchema, ['name']).min(1).max(16).describe('Disks created for every VM of the pool.'),
    virtualMachineTemplate: z
      .strictObject({
        metadata: z
          .strictObject({
            labels: stringMap().optional().describe('Labels of every VM.'),
            annotations: stringMap().optional().describe('Annotations of every VM.'),
          })
          .optional()
          .describe('Metadata of every VM.'),
        spec: PoolVirtualMachineSpecSchema,
      })
      .describe('The VM every member is made from.'),
  }),
  [
    {
      rule: `self.virtualDiskTemplates.all(t, ${refsPath}.filter(r, r.kind == 'VirtualDisk' && r.name == t.name).size() == 1)`,
      message: 'every virtual disk template must be referenced exactly once in blockDeviceRefs',
      fieldPath: '.virtualDiskTemplates',
      holds: (s) =>
        s.virtualDiskTemplates.every(
          (t) => s.virtualMachineTemplate.spec.blockDeviceRefs.filter((r) => r.kind === 'VirtualDisk' && r.name === t.name).length === 1,
        ),
    },
    {
      rule: `${refsPath}.all(r, r.kind != 'VirtualDisk' || self.virtualDiskTemplates.exists(t, t.name == r.name))`,
      message: 'a VirtualDisk in blockDeviceRefs must name a virtual disk template',
      fieldPath: '.virtualMachineTemplate.spec.blockDeviceRefs',
      holds: (s) =>
        s.virtualMachineTemplate.spec.blockDeviceRefs.every((r) => r.kind !== 'VirtualDisk' || s.virtualDiskTemplates.some((t) => t.name === r.name)),
    },
  ],
).describe('Desired state of the pool.');

const replicasCount = (what: string) => int32().optional().describe(what);

export const VirtualMachinePoolStatusSchema = z
  .strictObject({
    replicas: replicasCount('Number of VMs of the pool.'),
    readyReplicas: replicasCount('Number of running, ready VMs.'),
    updatedReplicas: replicasCount('Number of VMs matching the current template.'),
    restartPendingReplicas: replicasCount('Number of VMs waiting for a restart to apply the template.'),
    desiredTemplateHash: z.string().optional().describe('Hash of the current VM template.'),
    selector: z.string().optional().describe('Label selector of the member VMs (for the scale subresource).'),
    conditions: listMap(ConditionSchema, ['type']).optional().describe('Available, Progressing and Synced.'),
    observedGeneration: observedGeneration(),
  })
  .describe('Observed state of the pool.');

export const VirtualMachinePoolSchema = rootSchema(API_VERSION, 'VirtualMachinePool', VirtualMachinePoolSpecSchema, VirtualMachinePoolStatusSchema);
export type VirtualMachinePool = z.infer<typeof VirtualMachinePoolSchema>;

/** Labels and annotations on pool members. */
export const POOL_LABELS = {
  poolUID: 'vmpool.virtualization.deckhouse.io/pool-uid',
  pool: 'vmpool.virtualization.deckhouse.io/pool',
  templateHash: 'vmpool.virtualization.deckhouse.io/template-hash',
  diskTemplate: 'vmpool.virtualization.deckhouse.io/disk-template',
  patchedTemplateHash: 'vmpool.virtualization.deckhouse.io/patched-template-hash',
  freeSince: 'vmpool.virtualization.deckhouse.io/free-since',
} as const;

export const virtualMachinePool: ResourceDefinition<typeof VirtualMachinePoolSchema> = {
  ...publicNames('VirtualMachinePool', 'virtualmachinepools', 'Namespaced', ['vmpool', 'vmpools']),
  description: 'A scalable pool of identical virtual machines with per-VM disks made from templates.',
  schema: VirtualMachinePoolSchema,
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
  printerColumns: [
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
    AGE_COLUMN,
  ],
};
