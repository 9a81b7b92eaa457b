/**
 * Standard cron schedules (five fields: minute hour day-of-month month day-of-week, as the original
 * parses them with robfig/cron's ParseStandard) and the next time one fires, in UTC. Lists, ranges,
 * steps, `*` and `?`, month and weekday names, and the descriptors `@yearly`, `@annually`,
 * `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`. Day-of-month and day-of-week follow cron:
 * when both are restricted, a day matching either fires.
 */
import { ValidationError } from '../errors/index.js';

export interface CronSchedule {
  /** The text it was parsed from. */
  readonly text: string;
  /** The first time after `after` (whole minutes) the schedule fires. */
  next(after: Date): Date;
}

interface Field {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

const FIELDS: readonly Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] },
  { name: 'day of week', min: 0, max: 6, names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
];

const DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** The error a malformed schedule raises: names the schedule and the field at fault. */
export class CronSyntaxError extends ValidationError {}

function fail(text: string, message: string): never {
  throw new CronSyntaxError('invalid cron schedule', [{ path: '', message: `${JSON.stringify(text)}: ${message}` }]);
}

function value(text: string, field: Field, token: string): number {
  const named = field.names?.indexOf(token.toLowerCase()) ?? -1;
  if (named >= 0) return named + field.min;
  if (!/^\d+$/.test(token)) return fail(text, `${field.name}: ${JSON.stringify(token)} is not a number${field.names ? ' or a name' : ''}`);
  let n = Number(token);
  if (field.name === 'day of week' && n === 7) n = 0;
  if (n < field.min || n > field.max) return fail(text, `${field.name}: ${String(n)} is outside ${String(field.min)}-${String(field.max)}`);
  return n;
}

/** The set of values one field allows, and whether it was a wildcard. */
function parseField(text: string, field: Field, spec: string): { values: Set<number>; any: boolean } {
  const values = new Set<number>();
  let any = false;
  for (const part of spec.split(',')) {
    const [range = '', stepText, extra] = part.split('/');
    if (extra !== undefined || range === '') return fail(text, `${field.name}: ${JSON.stringify(part)} is malformed`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) === 0) return fail(text, `${field.name}: step ${JSON.stringify(stepText)} must be a positive number`);
      step = Number(stepText);
    }
    let lo: number;
    let hi: number;
    if (range === '*' || range === '?') {
      [lo, hi] = [field.min, field.max];
      any ||= stepText === undefined;
    } else if (range.includes('-')) {
      const [a = '', b = '', more] = range.split('-');
      if (more !== undefined) return fail(text, `${field.name}: ${JSON.stringify(range)} is malformed`);
      [lo, hi] = [value(text, field, a), value(text, field, b)];
      if (lo > hi) return fail(text, `${field.name}: range ${range} runs backwards`);
    } else {
      lo = value(text, field, range);
      hi = stepText === undefined ? lo : field.max;
    }
    for (let v = lo; v <= hi; v += step) values.add(v);
  }
  return { values, any };
}

/** Parse a standard schedule; a malformed one throws CronSyntaxError naming the field. */
export function parseCron(input: string): CronSchedule {
  const text = input.trim();
  if (text === '') return fail(input, 'the schedule is empty');
  const expanded = text.startsWith('@') ? DESCRIPTORS[text.toLowerCase()] : text;
  if (expanded === undefined) return fail(text, `unknown descriptor (one of ${Object.keys(DESCRIPTORS).join(', ')})`);
  const specs = expanded.split(/\s+/);
  if (specs.length !== 5) return fail(text, `expected 5 fields (minute hour day-of-month month day-of-week), got ${String(specs.length)}`);
  const [minute, hour, dom, month, dow] = FIELDS.map((f, i) => parseField(text, f, specs[i] ?? '')) as [
    ReturnType<typeof parseField>,
    ReturnType<typeof parseField>,
    ReturnType<typeof parseField>,
    ReturnType<typeof parseField>,
    ReturnType<typeof parseField>,
  ];
  const dayMatches = (d: Date): boolean => {
    const inDom = dom.values.has(d.getUTCDate());
    const inDow = dow.values.has(d.getUTCDay());
    if (dom.any || dow.any) return inDom && inDow;
    return inDom || inDow;
  };
  const schedule: CronSchedule = {
    text,
    next(after: Date): Date {
      const t = new Date(after.getTime());
      t.setUTCSeconds(0, 0);
      t.setUTCMinutes(t.getUTCMinutes() + 1);
      // Five years of days is enough for any satisfiable schedule (Feb 29 on a given weekday included).
      const limit = after.getTime() + 5 * 366 * 24 * 3600_000;
      while (t.getTime() <= limit) {
        if (!month.values.has(t.getUTCMonth() + 1)) {
          t.setUTCMonth(t.getUTCMonth() + 1, 1);
          t.setUTCHours(0, 0);
        } else if (!dayMatches(t)) {
          t.setUTCDate(t.getUTCDate() + 1);
          t.setUTCHours(0, 0);
        } else if (!hour.values.has(t.getUTCHours())) {
          t.setUTCHours(t.getUTCHours() + 1, 0);
        } else if (!minute.values.has(t.getUTCMinutes())) {
          t.setUTCMinutes(t.getUTCMinutes() + 1);
        } else {
          return t;
        }
      }
      return fail(text, 'it never fires');
    },
  };
  schedule.next(new Date(Date.UTC(2000, 0, 1))); // a schedule that never fires (Feb 31) is refused now, not at its first use
  return schedule;
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
