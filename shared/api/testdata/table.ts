/**
 * The manifest table shared by the zod test (shared/api) and the apiserver dry-run test
 * (tests/integration/api): each case states its verdict, and for an invalid manifest the field path
 * that the error must name. `judge` compares one verdict with the expectation; both tests use it.
 */
import type { FieldProblem } from '../../errors/index.js';

export type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; [key: string]: unknown };

export type Expectation =
  /** Accepted; `defaults` lists dotted paths and the values they must hold afterwards. */
  | { valid: true; defaults?: Readonly<Record<string, unknown>> }
  /**
   * Rejected, with an error naming `field`; with `message`, the error at that field carries this text
   * (the original's wording for its CEL rules).
   */
  | { valid: false; field: string; message?: string };

/** The expectation of a rejected manifest. */
export const invalid = (field: string, message?: string): Expectation =>
  message === undefined ? { valid: false, field } : { valid: false, field, message };

export interface ManifestCase {
  name: string;
  manifest: Manifest;
  expect: Expectation;
}

/** What a validator answered: the object after defaulting, or the problems / the error text. */
export type Verdict = { accepted: true; object: unknown } | { accepted: false; problems: readonly FieldProblem[] | string };

/** The value at a dotted path (`spec.disruptions.restartApprovalMode`). */
export function valueAt(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** JSON with object keys sorted, so that equal values give equal text. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether an error text names exactly this field (not merely a longer path that starts with it). A
 * list index (`[0]`) may appear as the apiserver writes an element of a list-map in server-side
 * apply errors (`[name="root"]`).
 */
export function namesField(text: string, field: string): boolean {
  const path = escape(field).replace(/\\\[\d+\\\]/g, (index) => `(?:${index}|\\[\\w+="[^"]*"\\])`);
  return new RegExp(`(?<![\\w])${path}(?![\\w\\[]|\\.\\w)`).test(text);
}

/** Mismatches between a verdict and a case's expectation; empty when they agree. */
export function judge(c: ManifestCase, verdict: Verdict): string[] {
  const { expect } = c;
  if (expect.valid) {
    if (!verdict.accepted) {
      const why = typeof verdict.problems === 'string' ? verdict.problems : JSON.stringify(verdict.problems);
      return [`expected the manifest to be accepted, it was rejected: ${why}`];
    }
    return Object.entries(expect.defaults ?? {}).flatMap(([path, want]) => {
      const got = valueAt(verdict.object, path);
      return canonical(got) === canonical(want)
        ? []
        : [`expected ${path} to default to ${JSON.stringify(want)}, got ${JSON.stringify(got)}`];
    });
  }
  if (verdict.accepted) return [`expected the manifest to be rejected naming ${expect.field}, it was accepted`];
  const named =
    typeof verdict.problems === 'string'
      ? namesField(verdict.problems, expect.field)
      : verdict.problems.some((p) => p.path === expect.field);
  if (!named) {
    const why = typeof verdict.problems === 'string' ? verdict.problems : verdict.problems.map((p) => p.path).join(', ');
    return [`expected the rejection to name ${expect.field}, it named: ${why}`];
  }
  if (expect.message === undefined || saysAt(verdict.problems, expect.field, expect.message)) return [];
  const why = typeof verdict.problems === 'string' ? verdict.problems : JSON.stringify(verdict.problems);
  return [`expected the rejection at ${expect.field} to say ${JSON.stringify(expect.message)}, it said: ${why}`];
}

/** Whether the problem at `field` carries `message` (on the apiserver's text: a line naming the field). */
function saysAt(problems: readonly FieldProblem[] | string, field: string, message: string): boolean {
  if (typeof problems !== 'string') return problems.some((p) => p.path === field && p.message.includes(message));
  return problems.split('\n').some((line) => namesField(line, field) && line.includes(message));
}
