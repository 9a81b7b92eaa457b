import { Gauge as PromGauge, type Registry as PromRegistry } from 'prom-client';
import { collectOf } from './counter.js';
import type { Labels } from './labels.js';
import { LabelledMetric, type MetricOptions } from './series.js';

/** A value that goes up and down (requests in flight, queue length). */
export class Gauge<L extends string = never> extends LabelledMetric<L> {
  protected readonly prom: PromGauge<L>;

  constructor(options: MetricOptions<L>, registry: PromRegistry) {
    super(options);
    this.prom = new PromGauge<L>({ name: options.name, help: options.help, labelNames: this.labelNames, registers: [registry], ...collectOf(options) });
  }

  set(labels: Labels<L> | undefined, value: number): void {
    const checked = this.checked(labels);
    if (checked === undefined) this.prom.set(value);
    else this.prom.set(checked, value);
  }

  inc(labels?: Labels<L>, by = 1): void {
    const checked = this.checked(labels);
    if (checked === undefined) this.prom.inc(by);
    else this.prom.inc(checked, by);
  }

  dec(labels?: Labels<L>, by = 1): void {
    const checked = this.checked(labels);
    if (checked === undefined) this.prom.dec(by);
    else this.prom.dec(checked, by);
  }

  /** Forget every series (a collect callback that sets the current ones first drops the old). */
  reset(): void {
    this.prom.reset();
  }
}
