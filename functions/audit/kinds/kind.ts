/** What one event kind is: a match predicate and a builder that decides the record. */
import type { AuditEvent } from '../event.js';
import type { Enrichment } from '../enrichment.js';
import type { AuditRecord } from '../records.js';

export type KindId = 'forbid' | 'vm-manage' | 'vm-control' | 'vmop-control' | 'vm-access' | 'module-component-control' | 'module-control' | 'integrity-check';

export type Decision =
  | { readonly log: true; readonly record: AuditRecord }
  /** The event matched but is not security-relevant (the original's `ShouldLog() == false`). */
  | { readonly log: false; readonly why: 'not_logged' }
  /** Whether to log depends on state that is not known (e.g. a deleted pod never seen). */
  | { readonly log: false; readonly why: 'undecidable'; readonly detail: string };

export interface EventKind {
  readonly id: KindId;
  matches(ev: AuditEvent): boolean;
  build(ev: AuditEvent, enrichment: Enrichment): Decision | Promise<Decision>;
}

export function logged(record: AuditRecord): Decision {
  return { log: true, record };
}

export const NOT_LOGGED: Decision = Object.freeze({ log: false, why: 'not_logged' });

export function undecidable(detail: string): Decision {
  return { log: false, why: 'undecidable', detail };
}
