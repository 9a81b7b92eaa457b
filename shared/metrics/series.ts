import type { Metric as PromMetric } from 'prom-client';
import { MetricDefinitionError } from './errors.js';
import { labelPairs, type Labels } from './labels.js';

/** What every metric declares: a name, help text and the names of its labels. */
export interface MetricOptions<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
  /**
   * Called before every exposition (prom-client's collect callback): set the metric's values from
   * the state they describe (a cache size, a queue depth) instead of updating them at every change.
   */
  collect?: () => void | Promise<void>;
}

/**
 * A metric family on prom-client: the labels a call gives are checked against the declared ones
 * (every one present, none other: a programming error otherwise, as a MetricDefinitionError), then
 * the value goes to prom-client, which keeps the series and formats the exposition.
 */
export abstract class LabelledMetric<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];

  constructor(options: MetricOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
  }

  protected abstract readonly prom: PromMetric<L>;

  /** The labels, checked; undefined for a label-less metric. Cheap on the hot path: no copy, no allocation. */
  protected checked(labels: Partial<Labels<L>> | undefined): Labels<L> | undefined {
    const names = this.labelNames;
    if (labels === undefined && names.length === 0) return undefined;
    const given = (labels ?? {}) as Record<string, string | undefined>;
    let count = 0;
    for (const key in given) if (Object.hasOwn(given, key)) count += 1;
    let complete = count === names.length;
    for (const name of names) if (given[name] === undefined) complete = false;
    if (!complete) {
      labelPairs(this.name, names, labels); // throws naming the missing or unknown label
      throw new MetricDefinitionError(`metric ${this.name}: labels do not match ${names.join(', ')}`);
    }
    return count === 0 ? undefined : (given as Labels<L>);
  }

  /** The current value of the series with these labels (0 when it was never touched); counters and gauges. */
  async get(labels?: Labels<L>): Promise<number> {
    const wanted = this.checked(labels) ?? {};
    const { values } = await this.prom.get();
    const found = values.find((v) => this.labelNames.every((n) => String((v.labels as Record<string, unknown>)[n]) === (wanted as Record<string, string>)[n]));
    return found?.value ?? 0;
  }
}
