import { Registry as PromRegistry, collectDefaultMetrics } from 'prom-client';
import { Counter } from './counter.js';
import { REPLACED_MONITOR_MS, replaceEventLoopDelayGauges } from './event-loop.js';
import { MetricDefinitionError } from './errors.js';
import { Gauge } from './gauge.js';
import { Histogram, type HistogramOptions } from './histogram.js';
import { checkNames } from './labels.js';
import type { MetricOptions } from './series.js';

/** The content type of the text exposition format served on `/metrics`. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface RegistryOptions {
  /**
   * Add prom-client's default metrics of the process (CPU, resident memory, open file descriptors,
   * event loop lag, heap, GC): the registry a server exposes on /metrics turns them on. The event-loop
   * delay gauges sample every 100 ms (event-loop.ts), not prom-client's 10 ms.
   */
  processMetrics?: boolean;
}

/**
 * A set of metric families with unique names, exposed together, on prom-client (docs/adr/0015).
 * Each server (function host, daemon) owns one registry; there is no process-global default, so
 * in-process tests never share counters.
 */
export class Registry {
  private readonly prom = new PromRegistry();

  constructor(options: RegistryOptions = {}) {
    if (options.processMetrics === true) {
      collectDefaultMetrics({ register: this.prom, eventLoopMonitoringPrecision: REPLACED_MONITOR_MS });
      replaceEventLoopDelayGauges(this.prom);
    }
  }

  counter<L extends string = never>(options: MetricOptions<L>): Counter<L> {
    this.declare(options.name, options.labelNames ?? []);
    return new Counter<L>(options, this.prom);
  }

  gauge<L extends string = never>(options: MetricOptions<L>): Gauge<L> {
    this.declare(options.name, options.labelNames ?? []);
    return new Gauge<L>(options, this.prom);
  }

  histogram<L extends string = never>(options: HistogramOptions<L>): Histogram<L> {
    this.declare(options.name, options.labelNames ?? [], ['le']);
    return new Histogram<L>(options, this.prom);
  }

  /** Every family in registration order, in the Prometheus text format (collect callbacks run first). */
  async expose(): Promise<string> {
    return await this.prom.metrics();
  }

  private declare(name: string, labelNames: readonly string[], reserved: readonly string[] = []): void {
    checkNames(name, labelNames, reserved);
    if (this.prom.getSingleMetric(name) !== undefined) throw new MetricDefinitionError(`metric ${name} is already registered`);
  }
}
