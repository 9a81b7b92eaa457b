/**
 * Standard cron schedules (five fields: minute hour day-of-month month day-of-week, as the original
 * parses them with robfig/cron's ParseStandard) and the next time one fires, in UTC. The parsing and
 * the arithmetic are cron-parser's; this wrapper holds to the standard form (exactly five fields, no
 * seconds; the descriptors `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`,
 * `@hourly`) and names the field at fault in its errors.
 */
import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { ValidationError, errorMessage } from '../errors/index.js';

export interface CronSchedule {
  /** The text it was parsed from. */
  readonly text: string;
  /** The first time after `after` (whole minutes) the schedule fires. */
  next(after: Date): Date;
}

const FIELD_NAMES = ['minute', 'hour', 'day of month', 'month', 'day of week'] as const;
/** A schedule every field of which is valid: one field at a time is put in it to find the one at fault. */
const NEUTRAL = ['0', '0', '*', '*', '*'] as const;

const DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** The error a malformed schedule raises: names the schedule and, where one is, the field at fault. */
export class CronSyntaxError extends ValidationError {}

function fail(text: string, message: string): never {
  throw new CronSyntaxError('invalid cron schedule', [{ path: '', message: `${JSON.stringify(text)}: ${message}` }]);
}

function parse(expression: string, after: Date): CronExpression {
  return CronExpressionParser.parse(expression, { tz: 'UTC', currentDate: after });
}

/** Which field makes `fields` fail, with cron-parser's words, or the whole schedule's error. */
function explain(fields: readonly string[], err: unknown): string {
  for (const [i, token] of fields.entries()) {
    const alone = NEUTRAL.map((n, j) => (j === i ? token : n));
    try {
      parse(alone.join(' '), new Date(0));
    } catch (fieldErr: unknown) {
      return `${FIELD_NAMES[i] ?? 'field'} ${JSON.stringify(token)}: ${errorMessage(fieldErr)}`;
    }
  }
  return errorMessage(err);
}

/** Parse a standard schedule; a malformed one (or one that never fires) throws CronSyntaxError. */
export function parseCron(input: string): CronSchedule {
  const text = input.trim();
  if (text === '') return fail(input, 'the schedule is empty');
  const expanded = text.startsWith('@') ? DESCRIPTORS[text.toLowerCase()] : text;
  if (expanded === undefined) return fail(text, `unknown descriptor (one of ${Object.keys(DESCRIPTORS).join(', ')})`);
  const fields = expanded.split(/\s+/);
  if (fields.length !== 5) return fail(text, `expected 5 fields (minute hour day-of-month month day-of-week), got ${String(fields.length)}`);
  const next = (after: Date): Date => {
    // Whole minutes: a schedule fires at second 0, the first time strictly after `after`.
    const from = new Date(after.getTime());
    from.setUTCSeconds(0, 0);
    return parse(expanded, from).next().toDate();
  };
  try {
    next(new Date(Date.UTC(2000, 0, 1))); // a schedule that never fires (Feb 31) is refused now, not at its first use
  } catch (err: unknown) {
    return fail(text, explain(fields, err));
  }
  return { text, next };
}

/** What is wrong with a schedule, or undefined when it parses (for config and schema checks). */
export function cronProblem(text: string): string | undefined {
  try {
    parseCron(text);
    return undefined;
  } catch (err: unknown) {
    return err instanceof CronSyntaxError ? (err.problems[0]?.message ?? err.message) : String(err);
  }
}
