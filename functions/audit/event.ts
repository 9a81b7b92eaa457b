/**
 * The audit.k8s.io/v1 Event fields this function reads. Every other field of an event is dropped by
 * the parse; nested objects the matchers do not inspect (`requestObject`, `responseObject`) stay opaque.
 */
import { z } from 'zod';

export const AUDIT_API_VERSION = 'audit.k8s.io/v1';

/** Audit stages as the apiserver spells them. */
export const Stage = {
  RequestReceived: 'RequestReceived',
  ResponseStarted: 'ResponseStarted',
  ResponseComplete: 'ResponseComplete',
  Panic: 'Panic',
} as const;

/** Audit levels as the apiserver spells them. */
export const AuditLevel = {
  None: 'None',
  Metadata: 'Metadata',
  Request: 'Request',
  RequestResponse: 'RequestResponse',
} as const;

/** Annotations the authorizer adds to an event. */
export const Annotation = {
  decision: 'authorization.k8s.io/decision',
  reason: 'authorization.k8s.io/reason',
} as const;

const optionalString = z.string().optional();

export const objectRefSchema = z.object({
  resource: optionalString,
  namespace: optionalString,
  name: optionalString,
  apiGroup: optionalString,
  apiVersion: optionalString,
  subresource: optionalString,
});

export const auditEventSchema = z.object({
  kind: z.literal('Event').optional(),
  apiVersion: z.literal(AUDIT_API_VERSION).optional(),
  level: z.string().default(''),
  auditID: z.string().min(1),
  stage: z.string().min(1),
  requestURI: z.string().default(''),
  verb: z.string().min(1),
  user: z.object({ username: z.string().default(''), groups: z.array(z.string()).optional() }),
  sourceIPs: z.array(z.string()).optional(),
  objectRef: objectRefSchema.optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  responseObject: z.unknown().optional(),
  requestReceivedTimestamp: optionalString,
});

/** One decoded audit event, reduced to the fields the matchers and record builders read. */
export type AuditEvent = z.infer<typeof auditEventSchema>;
export type ObjectRef = z.infer<typeof objectRefSchema>;
