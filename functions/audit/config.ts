/** The audit function's own configuration (environment variables, parsed once at start). */
import { z } from 'zod';
import { senderAuthConfigShape } from '../../shared/authz/index.js';
import { env } from '../../shared/config/index.js';

const ceOverrides = z
  .string()
  .optional()
  .transform((text, ctx) => {
    if (text === undefined) return {};
    try {
      const parsed = z.object({ extensions: z.record(z.string().regex(/^[a-z0-9]+$/), z.string()).optional() }).parse(JSON.parse(text));
      return parsed.extensions ?? {};
    } catch {
      ctx.addIssue({ code: 'custom', message: 'expected JSON {"extensions":{"name":"value"}} with lower-case alphanumeric names' });
      return z.NEVER;
    }
  });

export const auditConfigSchema = z.object({
  KUBECONFIG: env.optionalString().describe('kubeconfig for enrichment; unset: the in-cluster service account'),
  AUDIT_ENRICHMENT: z.enum(['kube', 'none']).default('kube').describe('kube: informers on the apiserver; none: no lookups, every enrichment field is unknown'),
  AUDIT_MAX_LINE_BYTES: env.int(4 * 1024 * 1024, 1024).describe('Largest audit line accepted; larger ones are rejected'),
  AUDIT_SYNC_WAIT_MS: env.int(3_000).describe('How long the first batch waits for the informers to sync'),
  AUDIT_DELETED_TTL_MS: env.int(180_000, 1).describe('How long deleted objects stay available for enrichment'),
  AUDIT_ADMIN_TTL_MS: env.int(60_000).describe('How long an is_admin access-review answer is reused'),
  AUDIT_DEDUP_TTL_MS: env.int(600_000, 1).describe('How long an (auditID, stage) pair is remembered to drop duplicates'),
  AUDIT_DEDUP_CAPACITY: env.int(100_000, 1).describe('Most (auditID, stage) pairs remembered'),
  K_SINK: z.url().optional().describe('CloudEvents sink for records (injected by a Knative SinkBinding); unset: stdout only'),
  K_CE_OVERRIDES: ceOverrides.describe('CloudEvent extension overrides (injected by a SinkBinding)'),
  AUDIT_CE_SOURCE: env.string('/d8-virtualization/virtualization-audit').describe('CloudEvent source of emitted records'),
  AUDIT_SINK_MAX_ATTEMPTS: env.int(5, 1).describe('Delivery attempts per record to K_SINK'),
  AUDIT_SINK_CONCURRENCY: env.int(8, 1).describe('Records delivered to K_SINK at the same time'),
  AUDIT_SINK_QUEUE_LIMIT: env.int(10_000, 1).describe('Records waiting for K_SINK before new ones are dropped (they stay on stdout)'),
  AUDIT_SINK_TIMEOUT_MS: env.int(10_000, 1).describe('Deadline of one delivery attempt to K_SINK'),
  // Who may send audit events: `create auditevents.virtualization.deckhouse.io` (shared/authz/senders.ts).
  ...senderAuthConfigShape,
});

export type AuditConfig = z.infer<typeof auditConfigSchema>;
