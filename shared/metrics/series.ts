import { labelPairs, seriesKey, type Labels } from './labels.js';
import { familyHeader, formatLabels, formatValue } from './text.js';

export type MetricType = 'counter' | 'gauge' | 'histogram';

/** What every metric declares: a name, help text and the names of its labels. */
export interface MetricOptions<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
}

/** One exposed metric family. */
export interface Exposable {
  readonly name: string;
  expose(): string;
}

interface Series<V> {
  readonly pairs: ReadonlyArray<readonly [string, string]>;
  value: V;
}

/**
 * A metric family: one value of type V per label combination, created on first use. Label-less
 * metrics have their single series from the start, so they are exposed (as zero) before any update.
 */
export abstract class LabelledMetric<L extends string, V> implements Exposable {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  protected abstract readonly type: MetricType;
  private readonly series = new Map<string, Series<V>>();

  constructor(options: MetricOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
  }

  protected abstract initial(): V;
  protected abstract sampleLines(pairs: ReadonlyArray<readonly [string, string]>, value: V): string;

  /** The series for these labels, created with the initial value when new. */
  protected seriesFor(labels: Partial<Labels<L>> | undefined): Series<V> {
    const pairs = labelPairs(this.name, this.labelNames, labels);
    const key = seriesKey(pairs);
    let found = this.series.get(key);
    if (found === undefined) {
      found = { pairs, value: this.initial() };
      this.series.set(key, found);
    }
    return found;
  }

  /** The series for these labels if it exists; reading never creates one. */
  protected existing(labels: Partial<Labels<L>> | undefined): Series<V> | undefined {
    return this.series.get(seriesKey(labelPairs(this.name, this.labelNames, labels)));
  }

  /** Create the label-less series eagerly; called by subclasses once their fields are set. */
  protected seedUnlabelled(): void {
    if (this.labelNames.length === 0) this.seriesFor(undefined);
  }

  expose(): string {
    let out = familyHeader(this.name, this.help, this.type);
    for (const { pairs, value } of this.series.values()) out += this.sampleLines(pairs, value);
    return out;
  }
}

/** A metric whose series each hold one number (counters and gauges). */
export abstract class NumericMetric<L extends string> extends LabelledMetric<L, number> {
  constructor(options: MetricOptions<L>) {
    super(options);
    this.seedUnlabelled();
  }

  /** The current value for these labels (0 for a series never touched). */
  get(labels?: Labels<L>): number {
    return this.existing(labels)?.value ?? 0;
  }

  protected initial(): number {
    return 0;
  }

  protected sampleLines(pairs: ReadonlyArray<readonly [string, string]>, value: number): string {
    return `${this.name}${formatLabels(pairs)} ${formatValue(value)}\n`;
  }
}
