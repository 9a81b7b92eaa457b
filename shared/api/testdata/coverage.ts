/** Which fields of a schema a set of objects leaves unset (to keep the "full" fixtures full). */
import type { JsonSchema } from '../k8s/structural.js';

/** Every field path under a structural schema: `a.b`, `a.list[].c`, `a.map{}.d`. */
export function schemaPaths(node: JsonSchema, prefix = ''): string[] {
  const out: string[] = [];
  const props = (node['properties'] ?? {}) as Record<string, JsonSchema>;
  for (const [key, child] of Object.entries(props)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    out.push(path, ...schemaPaths(child, path));
  }
  if (node['items'] !== undefined) out.push(...schemaPaths(node['items'] as JsonSchema, `${prefix}[]`));
  const extra = node['additionalProperties'];
  if (extra !== undefined && typeof extra === 'object') out.push(...schemaPaths(extra as JsonSchema, `${prefix}{}`));
  return out;
}

function valuesAt(value: unknown, path: string): unknown[] {
  let current: unknown[] = [value];
  for (const part of path.split('.')) {
    const [, name = '', suffix = ''] = /^([^[{]*)((?:\[\]|\{\})*)$/.exec(part) ?? [];
    current = current.flatMap((v) => (v !== null && typeof v === 'object' ? [(v as Record<string, unknown>)[name]] : []));
    for (const step of suffix.match(/\[\]|\{\}/g) ?? []) {
      current = current.flatMap((v): unknown[] => {
        if (step === '[]') return Array.isArray(v) ? (v as unknown[]) : [];
        return v !== null && typeof v === 'object' ? Object.values(v) : [];
      });
    }
    current = current.filter((v) => v !== undefined);
  }
  return current;
}

/** The schema paths that no object sets. */
export function uncovered(schema: JsonSchema, objects: readonly unknown[]): string[] {
  return schemaPaths(schema).filter((path) => !objects.some((o) => valuesAt(o, path).length > 0));
}
