import { Registry, type Counter, type Gauge, type Histogram } from '../../../shared/metrics/index.js';
import type { ReconcileObserver } from '../engine/runner.js';

const PREFIX = 'd8_virtualization_controller_';

/** Metrics of the controller process itself: reconciles, their latency, queues and leadership. */
export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconciles: Counter<'controller' | 'result'>;
  readonly latency: Histogram<'controller'>;
  readonly queueDepth: Gauge<'controller'>;
  readonly inFlight: Gauge<'controller'>;
  readonly leader: Gauge<'name'>;

  constructor() {
    this.reconciles = this.registry.counter({
      name: `${PREFIX}reconcile_total`,
      help: 'Reconciles by controller and result (ok, requeue, conflict, gone, error, aborted).',
      labelNames: ['controller', 'result'],
    });
    this.latency = this.registry.histogram({
      name: `${PREFIX}reconcile_duration_seconds`,
      help: 'Time one reconcile took, by controller.',
      labelNames: ['controller'],
    });
    this.queueDepth = this.registry.gauge({ name: `${PREFIX}workqueue_depth`, help: 'Keys waiting in the work queue.', labelNames: ['controller'] });
    this.inFlight = this.registry.gauge({ name: `${PREFIX}workqueue_in_flight`, help: 'Keys being reconciled now.', labelNames: ['controller'] });
    this.leader = this.registry.gauge({ name: 'leader_election_master_status', help: '1 while this replica leads, else 0.', labelNames: ['name'] });
  }

  /** The observer the runners report each reconcile to. */
  readonly observe: ReconcileObserver = (controller, outcome, seconds) => {
    this.reconciles.inc({ controller, result: outcome });
    this.latency.observe({ controller }, seconds);
  };
}
