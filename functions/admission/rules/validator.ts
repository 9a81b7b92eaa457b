/**
 * A resource's validator: which kind it admits, how the raw object is checked against the resource
 * schema (the typed value the checks see), and the checks themselves.
 */
import type { z } from 'zod';
import { zodProblems } from '../../../shared/config/index.js';
import type { FieldProblem } from '../../../shared/errors/index.js';
import type { Check } from './check.js';

export type Parsed<T> = { ok: true; value: T } | { ok: false; problems: FieldProblem[] };

export interface Validator<T> {
  /** The request kind this validator admits (`request.kind`); versions unset means any. */
  readonly group: string;
  readonly kind: string;
  readonly versions?: readonly string[];
  readonly parse: (raw: unknown) => Parsed<T>;
  readonly checks: readonly Check<T>[];
}

/** A parser from a zod schema: the value with defaults applied, or every schema problem with its path. */
export function schemaParser<S extends z.ZodType>(schema: S): (raw: unknown) => Parsed<z.output<S>> {
  return (raw) => {
    const result = schema.safeParse(raw);
    return result.success ? { ok: true, value: result.data } : { ok: false, problems: zodProblems(result.error) };
  };
}
