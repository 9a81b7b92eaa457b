import { Counter } from './counter.js';
import { MetricDefinitionError } from './errors.js';
import { Gauge } from './gauge.js';
import { Histogram, type HistogramOptions } from './histogram.js';
import { checkNames } from './labels.js';
import type { Exposable, MetricOptions } from './series.js';

/** The content type of the text exposition format served on `/metrics`. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * A set of metric families with unique names, exposed together. Each server (function host, daemon)
 * owns one registry; there is no process-global default, so in-process tests never share counters.
 */
export class Registry {
  private readonly metrics = new Map<string, Exposable>();

  counter<L extends string = never>(options: MetricOptions<L>): Counter<L> {
    checkNames(options.name, options.labelNames ?? []);
    return this.add(new Counter<L>(options));
  }

  gauge<L extends string = never>(options: MetricOptions<L>): Gauge<L> {
    checkNames(options.name, options.labelNames ?? []);
    return this.add(new Gauge<L>(options));
  }

  histogram<L extends string = never>(options: HistogramOptions<L>): Histogram<L> {
    checkNames(options.name, options.labelNames ?? [], ['le']);
    return this.add(new Histogram<L>(options));
  }

  /** Every family in registration order, in the Prometheus text format. */
  expose(): string {
    return [...this.metrics.values()].map((m) => m.expose()).join('');
  }

  private add<M extends Exposable>(metric: M): M {
    if (this.metrics.has(metric.name)) {
      throw new MetricDefinitionError(`metric ${metric.name} is already registered`);
    }
    this.metrics.set(metric.name, metric);
    return metric;
  }
}
