import { z } from 'zod';
import { ConfigError, type FieldProblem } from '../errors/index.js';
import { isAlignedCIDR, parseSubnet } from '../api/ipv4.js';

/** Turn zod issues into field problems (`a.b[0].c: message`). */
export function zodProblems(error: z.ZodError): FieldProblem[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

/**
 * Parse configuration from environment variables once, into a deeply frozen object. The schema's keys
 * are the variable names; every key should carry `.describe()` and a default. All problems are
 * reported together in one ConfigError.
 */
export function parseConfig<S extends z.ZodObject>(schema: S, env: Readonly<Record<string, string | undefined>> = process.env): Readonly<z.infer<S>> {
  const input: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new ConfigError('invalid configuration', zodProblems(result.error));
  }
  return deepFreeze(result.data);
}

export function deepFreeze<T>(value: T): Readonly<T> {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Go-style durations (`1200s`, `20m`, `1h30m`, `500ms`, `1.5s`, and a bare `0`) in milliseconds;
 *  undefined if not one. As in Go, any other number needs a unit. */
export function parseDurationMs(text: string): number | undefined {
  if (text === '0') return 0;
  if (!/^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/.test(text)) return undefined;
  const unitMs: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  let sum = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) sum += Number(amount) * (unitMs[unit ?? ''] ?? 0);
  return Math.round(sum);
}

/** Helpers for typical env values (strings from the environment coerced with clear messages). */
type Coerced<T> = z.ZodType<T, unknown>;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const env: {
  port(def: number): Coerced<number>;
  int(def: number, min?: number): Coerced<number>;
  bool(def: boolean): Coerced<boolean>;
  string(def: string): Coerced<string>;
  /** A Go-style duration such as `30s` or `20m`, parsed to milliseconds; positive unless `allowZero`. */
  duration(def: string, opts?: { allowZero?: boolean }): Coerced<number>;
  optionalString(): Coerced<string | undefined>;
  logLevel(): Coerced<(typeof LOG_LEVELS)[number]>;
  /**
   * Comma-separated IPv4 subnets (blanks ignored; empty by default). `aligned` (the default) also
   * requires each address to be the first of its subnet (10.66.10.0/24, not 10.66.10.1/24).
   */
  cidrList(opts?: { aligned?: boolean }): Coerced<string[]>;
  /** A comma-separated list (blanks ignored) whose every entry passes `valid`; `message` otherwise. */
  list(def: string, valid: (entry: string) => boolean, message: string): Coerced<string[]>;
} = {
  port: (def) => z.coerce.number().int().min(0).max(65535).default(def),
  int: (def, min = 0) => z.coerce.number().int().min(min).default(def),
  bool: (def) =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'])
      .default(def ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1' || v === 'yes'),
  string: (def) => z.string().default(def),
  duration: (def, opts = {}) =>
    z
      .string()
      .default(def)
      .transform((text, ctx) => {
        const ms = parseDurationMs(text.trim());
        const ok = ms !== undefined && (ms > 0 || (opts.allowZero === true && ms === 0));
        if (!ok) {
          const what = opts.allowZero === true ? 'a duration' : 'a positive duration';
          ctx.addIssue({ code: 'custom', message: `must be ${what} such as 30s, 20m or 500ms` });
        }
        return ms ?? 0;
      }),
  optionalString: () => z.string().optional(),
  logLevel: () => z.enum(LOG_LEVELS).default('info'),
  list: (def, valid, message) =>
    z
      .string()
      .default(def)
      .transform((text) =>
        text
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== ''),
      )
      .refine((list) => list.every(valid), message),
  cidrList: ({ aligned = true } = {}) =>
    aligned
      ? env.list('', isAlignedCIDR, 'every entry must be an IPv4 subnet aligned to its mask, e.g. 10.66.10.0/24')
      : env.list('', (c) => parseSubnet(c) !== undefined, 'must be a comma-separated list of IPv4 subnets such as 10.111.0.0/16'),
};
