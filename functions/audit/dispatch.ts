/**
 * Dispatch of one audit event to at most one record: the first kind (in the original's fixed order)
 * whose predicate matches decides. Never throws: a matcher or builder failure becomes a `failed` outcome.
 */
import { errorMessage } from '../../shared/errors/index.js';
import { isRelevant } from './common.js';
import type { AuditEvent } from './event.js';
import type { Enrichment } from './enrichment.js';
import { forbid } from './kinds/forbid.js';
import { integrityCheck } from './kinds/integrity.js';
import type { EventKind, KindId } from './kinds/kind.js';
import { moduleComponentControl } from './kinds/module-component-control.js';
import { moduleControl } from './kinds/module-control.js';
import { vmAccess } from './kinds/vm-access.js';
import { vmControl } from './kinds/vm-control.js';
import { vmManage } from './kinds/vm-manage.js';
import { vmopControl } from './kinds/vmop-control.js';
import type { AuditRecord } from './records.js';

export const KINDS: readonly EventKind[] = Object.freeze([
  forbid,
  vmManage,
  vmControl,
  vmopControl,
  vmAccess,
  moduleComponentControl,
  moduleControl,
  integrityCheck,
]);

export type Outcome =
  | { readonly outcome: 'record'; readonly kind: KindId; readonly record: AuditRecord }
  | { readonly outcome: 'not_logged'; readonly kind: KindId }
  | { readonly outcome: 'undecidable'; readonly kind: KindId; readonly detail: string }
  /** A matcher or builder threw: a defect, reported rather than propagated. */
  | { readonly outcome: 'failed'; readonly kind: KindId | undefined; readonly detail: string }
  /** No kind matched, or the event concerns nothing of the module. */
  | { readonly outcome: 'unmatched' };

const UNMATCHED: Outcome = Object.freeze({ outcome: 'unmatched' });

/** The first kind whose predicate accepts the event, if any. */
export function matchKind(ev: AuditEvent, kinds: readonly EventKind[] = KINDS): EventKind | undefined {
  if (!isRelevant(ev)) return undefined;
  return kinds.find((k) => k.matches(ev));
}

export async function dispatch(ev: AuditEvent, enrichment: Enrichment, kinds: readonly EventKind[] = KINDS): Promise<Outcome> {
  let kind: EventKind | undefined;
  try {
    kind = matchKind(ev, kinds);
    if (kind === undefined) return UNMATCHED;
    const decision = await kind.build(ev, enrichment);
    if (decision.log) return { outcome: 'record', kind: kind.id, record: decision.record };
    if (decision.why === 'not_logged') return { outcome: 'not_logged', kind: kind.id };
    return { outcome: 'undecidable', kind: kind.id, detail: decision.detail };
  } catch (err: unknown) {
    return { outcome: 'failed', kind: kind?.id, detail: errorMessage(err) };
  }
}
