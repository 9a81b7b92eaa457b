import { MetricDefinitionError } from './errors.js';
import type { Labels } from './labels.js';
import { LabelledMetric, type MetricOptions, type MetricType } from './series.js';
import { formatLabels, formatValue } from './text.js';

/** Latency buckets in seconds, from 1 ms to 10 s. */
export const DEFAULT_SECONDS_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface HistogramOptions<L extends string> extends MetricOptions<L> {
  /** Upper bounds, strictly increasing; `+Inf` is implied. */
  buckets?: readonly number[];
}

interface HistogramValue {
  /** Non-cumulative count per bucket; the last slot is the implied +Inf bucket. */
  counts: number[];
  sum: number;
  count: number;
}

/** Observations counted into buckets, exposed cumulatively with `_sum` and `_count`. */
export class Histogram<L extends string = never> extends LabelledMetric<L, HistogramValue> {
  protected readonly type: MetricType = 'histogram';
  readonly buckets: readonly number[];

  constructor(options: HistogramOptions<L>) {
    super(options);
    this.buckets = checkBuckets(options.name, options.buckets ?? DEFAULT_SECONDS_BUCKETS);
    this.seedUnlabelled();
  }

  observe(labels: Labels<L> | undefined, value: number): void {
    const series = this.seriesFor(labels).value;
    let slot = this.buckets.findIndex((bound) => value <= bound);
    if (slot === -1) slot = this.buckets.length;
    series.counts[slot] = (series.counts[slot] ?? 0) + 1;
    series.sum += value;
    series.count += 1;
  }

  protected initial(): HistogramValue {
    return { counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
  }

  protected sampleLines(pairs: ReadonlyArray<readonly [string, string]>, value: HistogramValue): string {
    let out = '';
    let cumulative = 0;
    const bounds = [...this.buckets, Infinity];
    bounds.forEach((bound, i) => {
      cumulative += value.counts[i] ?? 0;
      const labels = formatLabels([...pairs, ['le', formatValue(bound)]]);
      out += `${this.name}_bucket${labels} ${cumulative}\n`;
    });
    const plain = formatLabels(pairs);
    return `${out}${this.name}_sum${plain} ${formatValue(value.sum)}\n${this.name}_count${plain} ${value.count}\n`;
  }
}

function checkBuckets(name: string, buckets: readonly number[]): readonly number[] {
  const bounds = buckets.filter((b) => b !== Infinity);
  const increasing = bounds.every((b, i) => !Number.isNaN(b) && (i === 0 || b > (bounds[i - 1] ?? -Infinity)));
  if (!increasing) throw new MetricDefinitionError(`histogram ${name}: buckets must be strictly increasing numbers`);
  return Object.freeze(bounds);
}
