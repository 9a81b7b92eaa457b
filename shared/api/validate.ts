/**
 * Checking objects against the resource schemas, with problems located by field path the way the
 * apiserver names them (`spec.cpu.cores`, `spec.blockDeviceRefs[0].kind`, `spec.foo` for an unknown
 * field).
 */
import type { z } from 'zod';
import { formatPath } from '../config/index.js';
import type { FieldProblem } from '../errors/index.js';
import { ALL_RESOURCES } from './registry.js';

export type Checked<T> = { ok: true; value: T } | { ok: false; problems: FieldProblem[] };

/** Field problems of a zod error; an unknown key is reported at its own path. */
export function fieldProblems(error: z.ZodError): FieldProblem[] {
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((k) => ({ path: formatPath([...issue.path, k]), message: 'unknown field' }))
      : [{ path: formatPath(issue.path), message: issue.message }],
  );
}

/** Parse with a schema: the value with defaults applied, or every problem found. */
export function check<S extends z.ZodType>(schema: S, input: unknown): Checked<z.output<S>> {
  const result = schema.safeParse(input);
  return result.success ? { ok: true, value: result.data } : { ok: false, problems: fieldProblems(result.error) };
}

/** Check any object of one of our kinds (chosen by apiVersion and kind). */
export function checkObject(input: unknown): Checked<Record<string, unknown>> {
  const { apiVersion, kind } = (input ?? {}) as { apiVersion?: unknown; kind?: unknown };
  for (const def of ALL_RESOURCES.filter((d) => d.kind === kind)) {
    const versions = [{ name: def.version, schema: def.schema }, ...(def.otherVersions ?? [])];
    const version = versions.find((v) => `${def.group}/${v.name}` === apiVersion);
    if (version !== undefined) return check(version.schema, input) as Checked<Record<string, unknown>>;
  }
  return { ok: false, problems: [{ path: 'kind', message: `unknown kind ${String(apiVersion)} ${String(kind)}` }] };
}
