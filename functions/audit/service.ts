/**
 * The audit service behind every input: decode, process, write records, count and log. Transport
 * code (routes, the CloudEvent handler) only frames requests and answers.
 */
import type { Logger } from '../../shared/log/index.js';
import { decodeBody, decodeValue, type DecodeLimits, type ElementResult } from './codec.js';
import type { DuplicateFilter } from './dedup.js';
import type { Enrichment } from './enrichment.js';
import type { AuditMetrics, InputName } from './metrics.js';
import type { RecordWriter } from './output.js';
import { processElements, type BatchSummary, type EventOutcome } from './pipeline.js';
import type { CloudEventSink } from './sink.js';

export interface AuditServiceDeps {
  readonly enrichment: Enrichment;
  /** Called before each batch; the first call may wait for the informers (first use). */
  readonly prepare?: () => Promise<void>;
  readonly writer: RecordWriter;
  readonly sink?: CloudEventSink | undefined;
  readonly duplicates: DuplicateFilter;
  readonly metrics: AuditMetrics;
  readonly limits: DecodeLimits;
  readonly log: Logger;
}

/**
 * The request's logger, asked for only when something is logged: the host makes a request's child
 * logger (and a request ID) on first use, which would otherwise cost every request.
 */
export type LazyLogger = () => Logger;

export class AuditService {
  constructor(private readonly deps: AuditServiceDeps) {}

  /** A raw body: JSON array, NDJSON, EventList or a single event. */
  processBody(input: InputName, body: Buffer | string, log?: LazyLogger): Promise<BatchSummary> {
    return this.process(input, () => decodeBody(body, this.deps.limits), log);
  }

  /** An already-parsed payload (CloudEvent data). */
  processValue(input: InputName, value: unknown, log?: LazyLogger): Promise<BatchSummary> {
    return this.process(input, () => decodeValue(value, this.deps.limits), log);
  }

  private async process(input: InputName, decode: () => ElementResult[], log: LazyLogger = () => this.deps.log): Promise<BatchSummary> {
    const { metrics, writer, sink } = this.deps;
    const started = process.hrtime.bigint();
    await this.deps.prepare?.();
    const elements = decode();
    const summary = await processElements(elements, {
      enrichment: this.deps.enrichment,
      duplicates: this.deps.duplicates,
      emit: (record, kind) => {
        const line = writer.write(record);
        metrics.records.inc({ kind });
        sink?.enqueue(record, line, kind);
      },
      rejected: (r) => {
        metrics.rejected.inc({ input, reason: r.reason });
        log().warn({ input, index: r.index, reason: r.reason, detail: r.detail }, 'audit element rejected');
      },
      outcome: (o, auditID) => this.observe(o, auditID, log),
    }).finally(() => writer.flush());
    metrics.elements.inc({ input, result: 'accepted' }, summary.accepted);
    metrics.elements.inc({ input, result: 'rejected' }, summary.rejected.length);
    metrics.batchSeconds.observe({ input }, Number(process.hrtime.bigint() - started) / 1e9);
    return summary;
  }

  private observe(o: EventOutcome, auditID: string, log: LazyLogger): void {
    this.deps.metrics.events.inc({ outcome: o.outcome });
    if (o.outcome === 'undecidable' || o.outcome === 'failed') {
      log().warn({ auditID, kind: o.kind, outcome: o.outcome, detail: o.detail }, 'no record for a matched audit event');
    }
  }
}
