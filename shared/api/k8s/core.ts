/**
 * Kubernetes core and meta types used inside our resources (metav1.Condition, LabelSelector,
 * Toleration, NodeAffinity, TopologySpreadConstraint) and ObjectMeta for the TypeScript side. Enum-like
 * core fields (operator, effect) stay plain strings, as in the CRDs generated from the Go types.
 */
import { z } from 'zod';
import { dateTime, int32, int64, stringMap } from './schema.js';

export const OwnerReferenceSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});
export type OwnerReference = z.infer<typeof OwnerReferenceSchema>;

/** ObjectMeta as far as our code reads it; the apiserver owns the rest (kept, not checked). */
export const ObjectMetaSchema = z.looseObject({
  name: z.string().optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.int().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  labels: stringMap().optional(),
  annotations: stringMap().optional(),
  finalizers: z.array(z.string()).optional(),
  ownerReferences: z.array(OwnerReferenceSchema).optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMetaSchema>;

const CONDITION_TYPE = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const CONDITION_REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

/** Whether a string may stand as a metav1.Condition reason (an identifier such as `PodNotStarted`). */
export function isConditionReason(reason: string): boolean {
  return reason.length <= 1024 && CONDITION_REASON.test(reason);
}

/** metav1.Condition. */
export const ConditionSchema = z
  .strictObject({
    type: z.string().max(316).regex(CONDITION_TYPE).describe('Type of the condition in CamelCase.'),
    status: z.enum(['True', 'False', 'Unknown']).describe('Status of the condition: True, False or Unknown.'),
    observedGeneration: int64().min(0).optional().describe('The .metadata.generation the condition was set for.'),
    lastTransitionTime: dateTime().describe('When the condition last changed from one status to another.'),
    reason: z.string().min(1).max(1024).regex(CONDITION_REASON).describe('Programmatic identifier of the reason.'),
    message: z.string().max(32768).describe('Human-readable details about the transition.'),
  })
  .describe('A condition of the resource (metav1.Condition).');
export type Condition = z.infer<typeof ConditionSchema>;

const requirement = z.strictObject({
  key: z.string().describe('The label key the selector applies to.'),
  operator: z.string().describe('Relation of the key to the values: In, NotIn, Exists, DoesNotExist.'),
  values: z.array(z.string()).optional().describe('Values for In and NotIn; empty for Exists and DoesNotExist.'),
});

/** metav1.LabelSelector. */
export const LabelSelectorSchema = z
  .strictObject({
    matchLabels: stringMap().optional().describe('Labels that must all match.'),
    matchExpressions: z.array(requirement).optional().describe('Label requirements that must all match.'),
  })
  .describe('A label query over a set of resources.');
export type LabelSelector = z.infer<typeof LabelSelectorSchema>;

const nodeRequirement = z.strictObject({
  key: z.string().describe('The label or field key.'),
  operator: z.string().describe('In, NotIn, Exists, DoesNotExist, Gt or Lt.'),
  values: z.array(z.string()).optional().describe('Values to compare with.'),
});

/** corev1.NodeSelectorTerm. */
export const NodeSelectorTermSchema = z.strictObject({
  matchExpressions: z.array(nodeRequirement).optional().describe('Requirements on node labels.'),
  matchFields: z.array(nodeRequirement).optional().describe('Requirements on node fields.'),
});

/** corev1.NodeAffinity. */
export const NodeAffinitySchema = z
  .strictObject({
    requiredDuringSchedulingIgnoredDuringExecution: z
      .strictObject({
        nodeSelectorTerms: z.array(NodeSelectorTermSchema).describe('Terms ORed together.'),
      })
      .optional()
      .describe('Hard requirement for scheduling.'),
    preferredDuringSchedulingIgnoredDuringExecution: z
      .array(
        z.strictObject({
          weight: int32().describe('Weight 1-100 added when the preference matches.'),
          preference: NodeSelectorTermSchema.describe('The node selector term.'),
        }),
      )
      .optional()
      .describe('Soft preferences for scheduling.'),
  })
  .describe('Node affinity scheduling rules.');

/** corev1.Toleration. */
export const TolerationSchema = z.strictObject({
  key: z.string().optional().describe('The taint key; empty with operator Exists matches all taints.'),
  operator: z.string().optional().describe('Exists or Equal (default Equal).'),
  value: z.string().optional().describe('The taint value for operator Equal.'),
  effect: z.string().optional().describe('NoSchedule, PreferNoSchedule or NoExecute; empty matches all.'),
  tolerationSeconds: int64().optional().describe('How long a NoExecute taint is tolerated.'),
});
export type Toleration = z.infer<typeof TolerationSchema>;

/**
 * A topology spread constraint as the original's VirtualMachine CRD has it: labelSelector, maxSkew,
 * topologyKey and whenUnsatisfiable only (its hand-written schema refuses the newer pod fields).
 */
export const VMTopologySpreadConstraintSchema = z.strictObject({
  maxSkew: int32().describe('Maximum permitted difference in the number of matching pods between domains.'),
  topologyKey: z.string().describe('Node label key defining the topology domains.'),
  whenUnsatisfiable: z.string().describe('DoNotSchedule or ScheduleAnyway.'),
  labelSelector: LabelSelectorSchema.optional(),
});

/** corev1.TopologySpreadConstraint (the VirtualMachinePool template, generated from the Go type, has all of it). */
export const TopologySpreadConstraintSchema = VMTopologySpreadConstraintSchema.extend({
  minDomains: int32().optional().describe('Minimum number of eligible domains.'),
  nodeAffinityPolicy: z.string().optional().describe('Honor or Ignore node affinity when computing skew.'),
  nodeTaintsPolicy: z.string().optional().describe('Honor or Ignore node taints when computing skew.'),
  matchLabelKeys: z.array(z.string()).optional().describe('Pod label keys whose values narrow the selection.'),
});
