/**
 * The resource.k8s.io/v1 objects the USB DRA driver and the controller's USB reconcilers read and
 * write: ResourceSlice, ResourceClaim, ResourceClaimTemplate, DeviceClass, and the Node (for the
 * slices' owner). The schemas are loose: they name what this code reads; the apiserver validated the
 * rest, which is kept as it came (shared/kube decodeObject).
 */
import { z } from 'zod';
import { ObjectMetaSchema } from './core.js';
import type { ResourceDescriptor } from '../../kube/index.js';

export const RESOURCE_API_GROUP = 'resource.k8s.io';
export const RESOURCE_API_VERSION = 'v1';

const resourceDescriptor = (kind: string, plural: string, namespaced: boolean): ResourceDescriptor => ({
  group: RESOURCE_API_GROUP,
  version: RESOURCE_API_VERSION,
  plural,
  kind,
  namespaced,
});

export const resourceSliceDescriptor = resourceDescriptor('ResourceSlice', 'resourceslices', false);
export const resourceClaimDescriptor = resourceDescriptor('ResourceClaim', 'resourceclaims', true);
export const resourceClaimTemplateDescriptor = resourceDescriptor('ResourceClaimTemplate', 'resourceclaimtemplates', true);
export const nodeDescriptor: ResourceDescriptor = { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false };

/** One typed value of a device attribute: exactly one of the four. */
export const DeviceAttributeSchema = z.looseObject({
  int: z.number().int().optional(),
  bool: z.boolean().optional(),
  string: z.string().optional(),
  version: z.string().optional(),
});
export type DeviceAttribute = z.infer<typeof DeviceAttributeSchema>;

export const SliceDeviceSchema = z.looseObject({
  name: z.string(),
  attributes: z.record(z.string(), DeviceAttributeSchema).optional(),
});
export type SliceDevice = z.infer<typeof SliceDeviceSchema>;

export const ResourceSliceSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    driver: z.string(),
    pool: z.looseObject({ name: z.string(), generation: z.number().int(), resourceSliceCount: z.number().int() }),
    nodeName: z.string().optional(),
    devices: z.array(SliceDeviceSchema).optional(),
  }),
});
export type ResourceSlice = z.infer<typeof ResourceSliceSchema>;

const AllocationResultSchema = z.looseObject({
  request: z.string(),
  driver: z.string(),
  pool: z.string(),
  device: z.string(),
});

const NodeSelectorRequirementSchema = z.looseObject({ key: z.string(), operator: z.string(), values: z.array(z.string()).optional() });
const NodeSelectorSchema = z.looseObject({
  nodeSelectorTerms: z
    .array(
      z.looseObject({ matchExpressions: z.array(NodeSelectorRequirementSchema).optional(), matchFields: z.array(NodeSelectorRequirementSchema).optional() }),
    )
    .optional(),
});

export const ResourceClaimSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({}).optional(),
  status: z
    .looseObject({
      allocation: z
        .looseObject({
          devices: z.looseObject({ results: z.array(AllocationResultSchema).optional() }).optional(),
          /** Where the allocation is usable (core/v1 NodeSelector; a single node as `matchFields metadata.name In [node]`). */
          nodeSelector: NodeSelectorSchema.optional(),
        })
        .optional(),
      /** The consumers (pods, set by the scheduler) the claim is reserved for. */
      reservedFor: z.array(z.looseObject({ apiGroup: z.string().optional(), resource: z.string(), name: z.string(), uid: z.string().optional() })).optional(),
    })
    .optional(),
});
export type ResourceClaim = z.infer<typeof ResourceClaimSchema>;

export const ExactDeviceRequestSchema = z.looseObject({
  deviceClassName: z.string(),
  allocationMode: z.string().optional(),
  count: z.number().int().optional(),
  selectors: z.array(z.looseObject({ cel: z.looseObject({ expression: z.string() }).optional() })).optional(),
});

export const ResourceClaimTemplateSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    metadata: z.looseObject({ annotations: z.record(z.string(), z.string()).optional(), labels: z.record(z.string(), z.string()).optional() }).optional(),
    spec: z.looseObject({
      devices: z.looseObject({ requests: z.array(z.looseObject({ name: z.string(), exactly: ExactDeviceRequestSchema.optional() })).optional() }).optional(),
    }),
  }),
});
export type ResourceClaimTemplate = z.infer<typeof ResourceClaimTemplateSchema>;

export const NodeSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  status: z.looseObject({ addresses: z.array(z.looseObject({ type: z.string(), address: z.string() })).optional() }).optional(),
});
export type Node = z.infer<typeof NodeSchema>;

export const podDescriptor: ResourceDescriptor = { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true };
/** What the DRA daemon reads of a Pod: the node it is bound to. */
export const PodNodeSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({ nodeName: z.string().optional() }).optional(),
});
export type PodNode = z.infer<typeof PodNodeSchema>;
