import { Histogram as PromHistogram, type Registry as PromRegistry } from 'prom-client';
import { collectOf } from './counter.js';
import { MetricDefinitionError } from './errors.js';
import type { Labels } from './labels.js';
import { LabelledMetric, type MetricOptions } from './series.js';

/** Latency buckets in seconds, from 1 ms to 10 s. */
export const DEFAULT_SECONDS_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface HistogramOptions<L extends string> extends MetricOptions<L> {
  /** Upper bounds, strictly increasing; `+Inf` is implied. */
  buckets?: readonly number[];
}

/** Observations counted into buckets, exposed cumulatively with `_sum` and `_count`. */
export class Histogram<L extends string = never> extends LabelledMetric<L> {
  protected readonly prom: PromHistogram<L>;
  readonly buckets: readonly number[];

  constructor(options: HistogramOptions<L>, registry: PromRegistry) {
    super(options);
    this.buckets = checkBuckets(options.name, options.buckets ?? DEFAULT_SECONDS_BUCKETS);
    this.prom = new PromHistogram<L>({
      name: options.name,
      help: options.help,
      labelNames: this.labelNames,
      buckets: [...this.buckets],
      registers: [registry],
      ...collectOf(options),
    });
  }

  observe(labels: Labels<L> | undefined, value: number): void {
    const checked = this.checked(labels);
    if (checked === undefined) this.prom.observe(value);
    else this.prom.observe(checked, value);
  }
}

function checkBuckets(name: string, buckets: readonly number[]): readonly number[] {
  const bounds = buckets.filter((b) => b !== Infinity);
  const increasing = bounds.every((b, i) => !Number.isNaN(b) && (i === 0 || b > (bounds[i - 1] ?? -Infinity)));
  if (!increasing) throw new MetricDefinitionError(`histogram ${name}: buckets must be strictly increasing numbers`);
  return Object.freeze(bounds);
}
