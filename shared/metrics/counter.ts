import { Counter as PromCounter, type Registry as PromRegistry } from 'prom-client';
import { MetricDefinitionError } from './errors.js';
import type { Labels } from './labels.js';
import { LabelledMetric, type MetricOptions } from './series.js';

/** A value that only goes up (requests served, events handled). */
export class Counter<L extends string = never> extends LabelledMetric<L> {
  protected readonly prom: PromCounter<L>;

  constructor(options: MetricOptions<L>, registry: PromRegistry) {
    super(options);
    this.prom = new PromCounter<L>({ name: options.name, help: options.help, labelNames: this.labelNames, registers: [registry], ...collectOf(options) });
  }

  inc(labels?: Labels<L>, by = 1): void {
    if (!(by >= 0)) throw new MetricDefinitionError(`counter ${this.name}: cannot increase by ${by}`);
    const checked = this.checked(labels);
    if (checked === undefined) this.prom.inc(by);
    else this.prom.inc(checked, by);
  }
}

/** prom-client's collect option from ours (prom-client calls it with the metric as `this`; ours takes none). */
export function collectOf<L extends string>(options: MetricOptions<L>): { collect?: () => void | Promise<void> } {
  const collect = options.collect;
  return collect === undefined ? {} : { collect: () => collect() };
}
