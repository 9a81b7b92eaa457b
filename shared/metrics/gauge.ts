import type { Labels } from './labels.js';
import { NumericMetric, type MetricType } from './series.js';

/** A value that goes up and down (requests in flight, queue length). */
export class Gauge<L extends string = never> extends NumericMetric<L> {
  protected readonly type: MetricType = 'gauge';

  set(labels: Labels<L> | undefined, value: number): void {
    this.seriesFor(labels).value = value;
  }

  inc(labels?: Labels<L>, by = 1): void {
    this.seriesFor(labels).value += by;
  }

  dec(labels?: Labels<L>, by = 1): void {
    this.seriesFor(labels).value -= by;
  }
}
