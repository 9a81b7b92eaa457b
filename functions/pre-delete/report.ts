import { AppError } from '../../shared/errors/index.js';
import type { Logger } from '../../shared/log/index.js';
import type { CleanupReport, Outcome } from './cleanup.js';
import { describeTarget } from './kube-store.js';

function describeOutcome(outcome: Outcome): string {
  switch (outcome.state) {
    case 'absent':
      return 'not there, nothing to delete';
    case 'deleted':
      return `deleted, gone after ${outcome.afterMs} ms`;
    case 'timeout':
      return `still there at the deadline${outcome.lastError === undefined ? ' (finalizers not done)' : ` (last error: ${outcome.lastError})`}`;
    case 'failed':
      return `failed: ${outcome.error}`;
  }
}

/** The clean-up did not finish: 504 when the deadline passed, 502 when a call failed for good. */
export class CleanupIncompleteError extends AppError {
  readonly code = 'PRE_DELETE_INCOMPLETE';
  readonly status: number;

  constructor(readonly report: CleanupReport) {
    const problems = report.results.filter((r) => r.outcome.state === 'timeout' || r.outcome.state === 'failed');
    super(`pre-delete clean-up incomplete: ${problems.map((r) => `${describeTarget(r.target)}: ${describeOutcome(r.outcome)}`).join('; ')}`);
    this.status = problems.some((r) => r.outcome.state === 'failed') ? 502 : 504;
  }
}

/** One line per target, then the verdict. */
export function logReport(log: Logger, report: CleanupReport): void {
  for (const { target, outcome } of report.results) {
    const fields = { object: describeTarget(target), outcome: outcome.state };
    if (outcome.state === 'timeout' || outcome.state === 'failed') log.error(fields, describeOutcome(outcome));
    else log.info(fields, describeOutcome(outcome));
  }
  if (report.ok) log.info({ elapsedMs: report.elapsedMs }, 'pre-delete clean-up done');
  else log.error({ elapsedMs: report.elapsedMs }, 'pre-delete clean-up incomplete');
}
