/**
 * One batch from decoded elements to records: rejected elements are reported and skipped, duplicates
 * suppressed, every accepted event dispatched, every record handed to the sink in input order. The
 * summary is what the sender is told.
 */
import type { ElementResult, RejectReason } from './codec.js';
import type { DuplicateFilter } from './dedup.js';
import { dispatch, type Outcome } from './dispatch.js';
import type { Enrichment } from './enrichment.js';
import type { KindId } from './kinds/kind.js';
import type { AuditRecord } from './records.js';

export interface RejectedElement {
  readonly index: number;
  readonly reason: RejectReason;
  readonly detail: string;
}

export interface BatchSummary {
  /** Elements received. */
  received: number;
  /** Elements decoded into audit events (records, duplicates and unmatched events included). */
  accepted: number;
  rejected: RejectedElement[];
  records: number;
  duplicates: number;
  /** Accepted events that did not produce a record (no kind matched, or a kind decided not to log). */
  ignored: number;
  /** Events whose record could not be decided or built (see the function's log). */
  undecided: number;
}

export type EventOutcome = Outcome | { readonly outcome: 'duplicate' };

/** Where a batch's side effects go: records out, rejections and outcomes to logs and metrics. */
export interface PipelineDeps {
  readonly enrichment: Enrichment;
  readonly duplicates?: DuplicateFilter | undefined;
  emit(record: AuditRecord, kind: KindId): void;
  rejected?(element: RejectedElement): void;
  outcome?(outcome: EventOutcome, auditID: string): void;
}

export function emptySummary(): BatchSummary {
  return { received: 0, accepted: 0, rejected: [], records: 0, duplicates: 0, ignored: 0, undecided: 0 };
}

function count(summary: BatchSummary, outcome: EventOutcome): void {
  switch (outcome.outcome) {
    case 'record':
      summary.records++;
      return;
    case 'duplicate':
      summary.duplicates++;
      return;
    case 'unmatched':
    case 'not_logged':
      summary.ignored++;
      return;
    case 'undecidable':
    case 'failed':
      summary.undecided++;
  }
}

export async function processElements(elements: readonly ElementResult[], deps: PipelineDeps): Promise<BatchSummary> {
  const summary = emptySummary();
  summary.received = elements.length;
  for (const el of elements) {
    if (!el.ok) {
      const rejected = { index: el.index, reason: el.reason, detail: el.detail };
      summary.rejected.push(rejected);
      deps.rejected?.(rejected);
      continue;
    }
    summary.accepted++;
    const ev = el.event;
    let outcome: EventOutcome = await dispatch(ev, deps.enrichment);
    if (outcome.outcome === 'record') {
      // Only record-producing events are remembered, which keeps the window small on busy clusters.
      if (deps.duplicates?.isDuplicate(ev.auditID, ev.stage)) outcome = { outcome: 'duplicate' };
      else deps.emit(outcome.record, outcome.kind);
    }
    count(summary, outcome);
    deps.outcome?.(outcome, ev.auditID);
  }
  return summary;
}
