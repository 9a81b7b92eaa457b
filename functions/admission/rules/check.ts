/**
 * A resource's rules are a list of small named checks; every check runs on every request and writes
 * into its own Findings, so one request reports every violation at once. A check that cannot read
 * what it needs (LookupError) denies with the name of the check and of the object; any other throw is
 * a bug, reported as an internal error of that check instead of escaping.
 */
import { errorMessage } from '../../../shared/errors/index.js';
import { Findings, type AdmissionInput } from '../decision.js';
import { LookupError, type RuleContext } from '../lookups.js';

export interface Check<T> {
  /** Says what is checked ("block devices are unique"); appears in denials caused by a failed lookup. */
  readonly name: string;
  readonly run: (input: AdmissionInput<T>, ctx: RuleContext, out: Findings) => void | Promise<void>;
}

export interface CheckFailure {
  readonly check: string;
  readonly error: unknown;
}

export interface CheckResult {
  readonly findings: Findings;
  /** Unexpected throws, for the caller to log; each is also a violation. */
  readonly failures: readonly CheckFailure[];
}

/**
 * Run every check (the asynchronous ones concurrently: lookups overlap) and merge the findings in
 * declaration order. Checks that finish synchronously cost no promise.
 */
export async function runChecks<T>(checks: readonly Check<T>[], input: AdmissionInput<T>, ctx: RuleContext): Promise<CheckResult> {
  const failures: CheckFailure[] = [];
  const parts = checks.map(() => new Findings());
  const pending: Array<Promise<void>> = [];
  checks.forEach((check, i) => {
    const out = parts[i] ?? new Findings();
    try {
      const running = check.run(input, ctx, out);
      if (running !== undefined) pending.push(running.catch((err: unknown) => failed(check, err, out, failures)));
    } catch (err: unknown) {
      failed(check, err, out, failures);
    }
  });
  if (pending.length > 0) await Promise.all(pending);
  const findings = new Findings();
  for (const part of parts) findings.absorb('', part);
  return { findings, failures };
}

function failed<T>(check: Check<T>, err: unknown, out: Findings, failures: CheckFailure[]): void {
  if (err instanceof LookupError) {
    out.deny('', `cannot check that ${check.name}: ${err.message}`);
  } else {
    failures.push({ check: check.name, error: err });
    out.deny('', `internal error while checking that ${check.name}: ${errorMessage(err)}`);
  }
}

/** A check that only looks at the request (no lookups). */
export function pure<T>(name: string, run: (input: AdmissionInput<T>, out: Findings) => void): Check<T> {
  return { name, run: (input, _ctx, out) => run(input, out) };
}

/** Only on CREATE. */
export function onCreate<T>(check: Check<T>): Check<T> {
  return { name: check.name, run: (input, ctx, out) => (input.operation === 'CREATE' ? check.run(input, ctx, out) : undefined) };
}

/** Only on UPDATE, with the old object at hand. */
export function onUpdate<T>(name: string, run: (input: AdmissionInput<T>, old: T, ctx: RuleContext, out: Findings) => void | Promise<void>): Check<T> {
  return {
    name,
    run: (input, ctx, out) => (input.operation === 'UPDATE' && input.oldObject !== undefined ? run(input, input.oldObject, ctx, out) : undefined),
  };
}
