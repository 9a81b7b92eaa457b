/** Builders of audit events for tests: a valid ResponseComplete event with overridable fields. */
import { auditEventSchema, type AuditEvent } from '../event.js';

export type EventInput = Omit<Partial<AuditEvent>, 'user'> & { user?: { username: string } };

let counter = 0;

/** A complete, allowed event by `jane`; every field may be overridden. */
export function auditEvent(overrides: EventInput = {}): Record<string, unknown> {
  counter++;
  return {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level: 'Metadata',
    auditID: `00000000-0000-4000-8000-${String(counter).padStart(12, '0')}`,
    stage: 'ResponseComplete',
    requestURI: '/api/v1/namespaces/ns1/pods/p1',
    verb: 'get',
    user: { username: 'jane', groups: ['system:authenticated'] },
    sourceIPs: ['192.168.1.10'],
    objectRef: { resource: 'pods', namespace: 'ns1', name: 'p1', apiVersion: 'v1' },
    requestReceivedTimestamp: '2025-03-14T09:26:53.589793Z',
    stageTimestamp: '2025-03-14T09:26:53.612345Z',
    annotations: { 'authorization.k8s.io/decision': 'allow' },
    ...overrides,
  };
}

/** One Vector log event carrying `event` as its audit line. */
export function vectorEvent(event: unknown): Record<string, unknown> {
  return { message: JSON.stringify(event), file: '/var/log/kube-audit/audit.log', source_type: 'file' };
}

/** An event as the codec's schema produces it. */
export function decoded(overrides: EventInput = {}): AuditEvent {
  return auditEventSchema.parse(auditEvent(overrides));
}
