import { MetricDefinitionError } from './errors.js';
import type { Labels } from './labels.js';
import { NumericMetric, type MetricType } from './series.js';

/** A value that only goes up (requests served, events handled). */
export class Counter<L extends string = never> extends NumericMetric<L> {
  protected readonly type: MetricType = 'counter';

  inc(labels?: Labels<L>, by = 1): void {
    if (!(by >= 0)) throw new MetricDefinitionError(`counter ${this.name}: cannot increase by ${by}`);
    this.seriesFor(labels).value += by;
  }
}
