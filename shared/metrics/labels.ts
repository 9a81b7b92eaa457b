import { MetricDefinitionError } from './errors.js';

/** The label values of one series, keyed by the label names the metric declared. */
export type Labels<L extends string> = { readonly [K in L]: string };

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Throw unless the metric name and every label name are valid and the label names are unique. */
export function checkNames(name: string, labelNames: readonly string[], reserved: readonly string[] = []): void {
  if (!METRIC_NAME.test(name)) throw new MetricDefinitionError(`invalid metric name "${name}"`);
  const seen = new Set<string>();
  for (const label of labelNames) {
    if (!LABEL_NAME.test(label) || label.startsWith('__') || reserved.includes(label)) {
      throw new MetricDefinitionError(`metric ${name}: invalid label name "${label}"`);
    }
    if (seen.has(label)) throw new MetricDefinitionError(`metric ${name}: label "${label}" declared twice`);
    seen.add(label);
  }
}

/** The label values in declaration order; throws when one is missing or an undeclared one is given. */
export function labelPairs<L extends string>(
  metric: string,
  labelNames: readonly L[],
  labels: Partial<Labels<L>> | undefined,
): Array<readonly [string, string]> {
  const given = labels ?? {};
  for (const key of Object.keys(given)) {
    if (!(labelNames as readonly string[]).includes(key)) {
      throw new MetricDefinitionError(`metric ${metric}: unknown label "${key}"`);
    }
  }
  return labelNames.map((name) => {
    const value = (given as Record<string, string | undefined>)[name];
    if (value === undefined) throw new MetricDefinitionError(`metric ${metric}: label "${name}" missing`);
    return [name, value] as const;
  });
}
