/**
 * VirtualMachineClass between v1alpha2 and v1alpha3, as the conversion webhook and the v1alpha3
 * validator need it. The versions differ only in how a sizing policy writes core fractions:
 * v1alpha2 `coreFractions: [5, 100]`, `defaultCoreFraction: 5 | "Auto"`; v1alpha3 `["5%", "100%"]`,
 * `"5%" | "Auto"`. Everything else, status included, is copied unchanged. Pure: no I/O, never throws.
 */
import type { FieldProblem } from '../../errors/index.js';
import { GROUP } from './common.js';

export const CLASS_VERSIONS = ['v1alpha2', 'v1alpha3'] as const;
export type ClassVersion = (typeof CLASS_VERSIONS)[number];

type Json = Record<string, unknown>;
export type Converted = { ok: true; value: Json } | { ok: false; problems: FieldProblem[] };

const PERCENT = /^(100|[1-9][0-9]?)%$/;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The object at `to` (a copy; unchanged when it already is at `to`); problems name the fields whose
 * value is not of the other version's form.
 */
export function convertVirtualMachineClass(raw: unknown, to: ClassVersion): Converted {
  if (!isObject(raw)) return { ok: false, problems: [{ path: '', message: 'must be an object' }] };
  const copy = structuredClone(raw);
  if (copy['apiVersion'] === `${GROUP}/${to}`) return { ok: true, value: copy };
  copy['apiVersion'] = `${GROUP}/${to}`;
  const policies = isObject(copy['spec']) ? copy['spec']['sizingPolicies'] : undefined;
  if (!Array.isArray(policies)) return { ok: true, value: copy };
  const problems: FieldProblem[] = [];
  const fraction = to === 'v1alpha3' ? toPercent : toInt;
  policies.forEach((p: unknown, i) => {
    if (!isObject(p)) return;
    const at = `spec.sizingPolicies[${i}]`;
    const fractions = p['coreFractions'];
    if (Array.isArray(fractions)) p['coreFractions'] = fractions.map((f: unknown, j) => fraction(f, `${at}.coreFractions[${j}]`, problems));
    const d = p['defaultCoreFraction'];
    if (d !== undefined && d !== 'Auto') p['defaultCoreFraction'] = fraction(d, `${at}.defaultCoreFraction`, problems);
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: copy };
}

function toInt(value: unknown, path: string, problems: FieldProblem[]): unknown {
  if (typeof value === 'string' && PERCENT.test(value)) return Number(value.slice(0, -1));
  problems.push({ path, message: 'must be a percentage from 1% to 100%' });
  return value;
}

function toPercent(value: unknown, path: string, problems: FieldProblem[]): unknown {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 100) return `${value}%`;
  problems.push({ path, message: 'must be an integer from 1 to 100' });
  return value;
}
