import { Registry, type Counter, type Gauge, type Histogram } from '../../shared/metrics/index.js';

const PREFIX = 'd8_virtualization_route_forge_';

/**
 * What syncs are triggered by: the apiserver, the dedicated table or rules, a device of its routes
 * going down, other routes (a lookup check first), the timer, a retry.
 */
export type Trigger = 'start' | 'kube' | 'table' | 'link' | 'routing' | 'resync' | 'retry';
/** Why a change was made: the desired state changed, the kernel drifted from it, or stale at start. */
export type Cause = 'update' | 'repair' | 'gc';

/** Prometheus metrics of the daemon, one registry per process. */
export class RouteForgeMetrics {
  readonly registry = new Registry({ processMetrics: true });
  readonly routesManaged: Gauge<'kind'>;
  readonly rulesManaged: Gauge;
  readonly changes: Counter<'object' | 'op' | 'cause'>;
  readonly repairs: Counter<'object'>;
  readonly kernelErrors: Counter<'object' | 'op'>;
  readonly skipped: Gauge<'reason'>;
  readonly skips: Counter<'reason'>;
  readonly syncs: Counter<'result'>;
  readonly syncDuration: Histogram;
  readonly syncLatency: Histogram<'trigger'>;
  readonly pendingChanges: Gauge;
  readonly monitorRestarts: Counter;

  constructor() {
    const r = this.registry;
    this.routesManaged = r.gauge({
      name: `${PREFIX}routes_managed`,
      help: 'Routes wanted in the dedicated table: one per routable VM (vm), one per CIDR (blackhole).',
      labelNames: ['kind'],
    });
    this.rulesManaged = r.gauge({ name: `${PREFIX}rules_managed`, help: 'Policy rules wanted: one per VM CIDR.' });
    this.changes = r.counter({
      name: `${PREFIX}changes_total`,
      help: 'Changes applied to the kernel by object (route, rule), op (replace, delete, add) and cause (update, repair, gc).',
      labelNames: ['object', 'op', 'cause'],
    });
    this.repairs = r.counter({
      name: `${PREFIX}repairs_total`,
      help: 'Routes and rules restored after something else changed or removed them.',
      labelNames: ['object'],
    });
    this.kernelErrors = r.counter({
      name: `${PREFIX}kernel_errors_total`,
      help: 'Changes the kernel refused (retried with backoff).',
      labelNames: ['object', 'op'],
    });
    this.skipped = r.gauge({ name: `${PREFIX}skipped_vms`, help: 'VMs without a route of their own now, by reason.', labelNames: ['reason'] });
    this.skips = r.counter({ name: `${PREFIX}skips_total`, help: 'Times a VM started being skipped, by reason.', labelNames: ['reason'] });
    this.syncs = r.counter({
      name: `${PREFIX}syncs_total`,
      help: 'Syncs by result (ok, partial: some changes refused, failed: the kernel could not be read or written, dry-run).',
      labelNames: ['result'],
    });
    this.syncDuration = r.histogram({ name: `${PREFIX}sync_duration_seconds`, help: 'Time one sync took: read the kernel, diff, write.' });
    this.syncLatency = r.histogram({
      name: `${PREFIX}sync_latency_seconds`,
      help: 'From the first event that made the state dirty (by trigger) to the end of the sync that handled it.',
      labelNames: ['trigger'],
    });
    this.pendingChanges = r.gauge({
      name: `${PREFIX}pending_changes`,
      help: 'Changes found by the last sync and not applied (dry run, or refused by the kernel).',
    });
    this.monitorRestarts = r.counter({ name: `${PREFIX}monitor_restarts_total`, help: 'Restarts of the kernel change monitor (ip monitor) after it ended.' });
  }
}
