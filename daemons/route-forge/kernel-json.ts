/**
 * Codecs of iproute2's JSON (`ip -json`): routes of a table, rules and route lookups into the plain
 * records of model.ts. Pure; every input that is not what iproute2 prints is an error naming it.
 */
import { z } from 'zod';
import type { Lookup, Route, Rule } from './model.js';

const routeJson = z.looseObject({
  type: z.string().optional(),
  dst: z.string(),
  gateway: z.string().optional(),
  dev: z.string().optional(),
  prefsrc: z.string().optional(),
  metric: z.number().int().optional(),
});

const ruleJson = z.looseObject({
  priority: z.number().int(),
  dst: z.string().optional(),
  dstlen: z.number().int().optional(),
  table: z.union([z.string(), z.number()]).optional(),
});

export class IpJsonError extends Error {
  constructor(what: string, problem: string, options?: ErrorOptions) {
    super(`unexpected output of ip ${what}: ${problem}`, options);
    this.name = 'IpJsonError';
  }
}

function parseArray(text: string, what: string): unknown[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err: unknown) {
    throw new IpJsonError(what, 'not JSON', { cause: err });
  }
  if (!Array.isArray(value)) throw new IpJsonError(what, 'not a JSON array');
  return value;
}

/** `default` is 0.0.0.0/0, a host route has no length (`10.66.0.5`), a prefix keeps its own. */
export function normaliseDst(dst: string): string {
  if (dst === 'default') return '0.0.0.0/0';
  return dst.includes('/') ? dst : `${dst}/32`;
}

/** `ip -json route show table T` */
export function parseRoutes(text: string): Route[] {
  return parseArray(text, 'route show').map((entry, i) => {
    const parsed = routeJson.safeParse(entry);
    if (!parsed.success) throw new IpJsonError('route show', `entry ${i}: ${parsed.error.issues.map((p) => `${p.path.join('.')}: ${p.message}`).join('; ')}`);
    const r = parsed.data;
    return { dst: normaliseDst(r.dst), type: r.type ?? 'unicast', gateway: r.gateway, dev: r.dev, prefsrc: r.prefsrc, metric: r.metric ?? 0 };
  });
}

/** `ip -json rule show` */
export function parseRules(text: string): Rule[] {
  return parseArray(text, 'rule show').map((entry, i) => {
    const parsed = ruleJson.safeParse(entry);
    if (!parsed.success) throw new IpJsonError('rule show', `entry ${i}: ${parsed.error.issues.map((p) => `${p.path.join('.')}: ${p.message}`).join('; ')}`);
    const r = parsed.data;
    const dst = r.dst === undefined ? undefined : `${r.dst}/${r.dstlen ?? 32}`;
    return { priority: r.priority, dst, table: r.table === undefined ? '' : String(r.table) };
  });
}

/** `ip -json route get ADDRESS`: one route; `type: local` means the address is this host's. */
export function parseLookup(text: string): Lookup {
  const [first] = parseArray(text, 'route get');
  const parsed = routeJson.partial({ dst: true }).safeParse(first);
  if (first === undefined || !parsed.success) throw new IpJsonError('route get', 'no route in the answer');
  const r = parsed.data;
  return { ok: true, local: r.type === 'local', gateway: r.gateway, dev: r.dev, prefsrc: r.prefsrc };
}
