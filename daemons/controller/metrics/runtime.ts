import { Registry, type Counter, type Gauge, type Histogram } from '../../../shared/metrics/index.js';
import type { WorkQueueMetrics } from '../engine/queue.js';
import type { ReconcileObserver, ReconcileOutcome } from '../engine/runner.js';

const PREFIX = 'd8_virtualization_controller_';

/** client-go's workqueue latency buckets: 10 ns × 10^n, up to 1000 s. */
const QUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

/** controller-runtime's reconcile results for our outcomes (an aborted pass is not a result). */
const RESULT: Record<ReconcileOutcome, string | undefined> = {
  ok: 'success',
  requeue: 'requeue_after',
  conflict: 'error',
  gone: 'error',
  error: 'error',
  aborted: undefined,
};

/**
 * Metrics of the controller process itself: reconciles and their latency (ours with finer outcomes,
 * and controller-runtime's names), the work queues under client-go's `workqueue_*` names, leadership.
 */
export class ControllerMetrics {
  readonly registry = new Registry({ processMetrics: true });
  readonly reconciles: Counter<'controller' | 'result'>;
  readonly latency: Histogram<'controller'>;
  readonly leader: Gauge<'name'>;
  private readonly queue: {
    depth: Gauge<'name'>;
    adds: Counter<'name'>;
    retries: Counter<'name'>;
    queueDuration: Histogram<'name'>;
    workDuration: Histogram<'name'>;
  };
  private readonly runtime: {
    total: Counter<'controller' | 'result'>;
    errors: Counter<'controller'>;
    time: Histogram<'controller'>;
    activeWorkers: Gauge<'controller'>;
    maxConcurrent: Gauge<'controller'>;
  };

  constructor() {
    const r = this.registry;
    this.reconciles = r.counter({
      name: `${PREFIX}reconcile_total`,
      help: 'Reconciles by controller and result (ok, requeue, conflict, gone, error, aborted).',
      labelNames: ['controller', 'result'],
    });
    this.latency = r.histogram({ name: `${PREFIX}reconcile_duration_seconds`, help: 'Time one reconcile took, by controller.', labelNames: ['controller'] });
    this.leader = r.gauge({ name: 'leader_election_master_status', help: '1 while this replica leads, else 0.', labelNames: ['name'] });
    this.queue = {
      depth: r.gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue.', labelNames: ['name'] }),
      adds: r.counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue.', labelNames: ['name'] }),
      retries: r.counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue.', labelNames: ['name'] }),
      queueDuration: r.histogram({
        name: 'workqueue_queue_duration_seconds',
        help: 'How long in seconds an item stays in workqueue before being requested.',
        labelNames: ['name'],
        buckets: QUEUE_BUCKETS,
      }),
      workDuration: r.histogram({
        name: 'workqueue_work_duration_seconds',
        help: 'How long in seconds processing an item from workqueue takes.',
        labelNames: ['name'],
        buckets: QUEUE_BUCKETS,
      }),
    };
    this.runtime = {
      total: r.counter({
        name: 'controller_runtime_reconcile_total',
        help: 'Total number of reconciliations per controller.',
        labelNames: ['controller', 'result'],
      }),
      errors: r.counter({
        name: 'controller_runtime_reconcile_errors_total',
        help: 'Total number of reconciliation errors per controller.',
        labelNames: ['controller'],
      }),
      time: r.histogram({
        name: 'controller_runtime_reconcile_time_seconds',
        help: 'Length of time per reconciliation per controller.',
        labelNames: ['controller'],
      }),
      activeWorkers: r.gauge({
        name: 'controller_runtime_active_workers',
        help: 'Number of currently used workers per controller.',
        labelNames: ['controller'],
      }),
      maxConcurrent: r.gauge({
        name: 'controller_runtime_max_concurrent_reconciles',
        help: 'Maximum number of concurrent reconciles per controller.',
        labelNames: ['controller'],
      }),
    };
  }

  /** The observer the runners report each reconcile to. */
  readonly observe: ReconcileObserver = (controller, outcome, seconds) => {
    this.reconciles.inc({ controller, result: outcome });
    this.latency.observe({ controller }, seconds);
    const result = RESULT[outcome];
    if (result === undefined) return;
    this.runtime.total.inc({ controller, result });
    if (result === 'error') this.runtime.errors.inc({ controller });
    this.runtime.time.observe({ controller }, seconds);
  };

  /** The queue metrics of one runner (its controller name is the queue's `name`). */
  queueMetrics(name: string, workers: number): WorkQueueMetrics {
    const q = this.queue;
    const labels = { name };
    const controller = { controller: name };
    this.runtime.maxConcurrent.set(controller, workers);
    q.depth.set(labels, 0);
    this.runtime.activeWorkers.set(controller, 0);
    return {
      depth: (n) => q.depth.set(labels, n),
      inFlight: (n) => this.runtime.activeWorkers.set(controller, n),
      added: () => q.adds.inc(labels),
      retried: () => q.retries.inc(labels),
      queued: (seconds) => q.queueDuration.observe(labels, seconds),
      worked: (seconds) => q.workDuration.observe(labels, seconds),
    };
  }
}
