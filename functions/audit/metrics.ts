/** The audit function's metrics, on the host's registry (`/metrics`). */
import type { Counter, Histogram, Registry } from '../../shared/metrics/index.js';

export type InputName = 'vector' | 'webhook' | 'cloudevent';

export interface AuditMetrics {
  readonly elements: Counter<'input' | 'result'>;
  readonly rejected: Counter<'input' | 'reason'>;
  readonly events: Counter<'outcome'>;
  readonly records: Counter<'kind'>;
  readonly sink: Counter<'result'>;
  readonly batchSeconds: Histogram<'input'>;
}

export function auditMetrics(registry: Registry): AuditMetrics {
  return {
    elements: registry.counter({
      name: 'audit_elements_total',
      help: 'Batch elements received, by input and result (accepted, rejected)',
      labelNames: ['input', 'result'],
    }),
    rejected: registry.counter({
      name: 'audit_rejected_elements_total',
      help: 'Batch elements rejected, by input and reason',
      labelNames: ['input', 'reason'],
    }),
    events: registry.counter({
      name: 'audit_events_total',
      help: 'Accepted audit events by outcome (record, duplicate, unmatched, not_logged, undecidable, failed)',
      labelNames: ['outcome'],
    }),
    records: registry.counter({ name: 'audit_records_total', help: 'Records written, by event kind', labelNames: ['kind'] }),
    sink: registry.counter({
      name: 'audit_sink_records_total',
      help: 'Records sent to K_SINK, by result (delivered, failed, dropped)',
      labelNames: ['result'],
    }),
    batchSeconds: registry.histogram({
      name: 'audit_batch_duration_seconds',
      help: 'Time to decode, enrich and write one batch',
      labelNames: ['input'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1],
    }),
  };
}
