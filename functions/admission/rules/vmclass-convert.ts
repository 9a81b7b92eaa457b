/**
 * VirtualMachineClass v1alpha3 -> v1alpha2 for validation: v1alpha3 writes core fractions as percent
 * strings ("5%", default "Auto" or "50%"), v1alpha2 as integers (default int or "Auto").
 */
import { API_VERSION } from '../../../shared/api/resources/common.js';
import type { FieldProblem } from '../../../shared/errors/index.js';
import type { Parsed } from './validator.js';

type Json = Record<string, unknown>;

const PERCENT = /^(100|[1-9][0-9]?)%$/;

export function fromV1alpha3(raw: unknown): Parsed<unknown> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, problems: [{ path: '', message: 'must be an object' }] };
  const copy = structuredClone(raw) as Json;
  copy['apiVersion'] = API_VERSION;
  const spec = copy['spec'] as Json | undefined;
  const policies = spec !== null && typeof spec === 'object' ? spec['sizingPolicies'] : undefined;
  if (!Array.isArray(policies)) return { ok: true, value: copy };
  const problems: FieldProblem[] = [];
  policies.forEach((p: unknown, i) => {
    if (p === null || typeof p !== 'object') return;
    const policy = p as Json;
    const at = `spec.sizingPolicies[${i}]`;
    if (Array.isArray(policy['coreFractions'])) {
      policy['coreFractions'] = policy['coreFractions'].map((f: unknown, j) => toInt(f, `${at}.coreFractions[${j}]`, problems));
    }
    const d = policy['defaultCoreFraction'];
    if (d !== undefined && d !== 'Auto') policy['defaultCoreFraction'] = toInt(d, `${at}.defaultCoreFraction`, problems);
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: copy };
}

function toInt(value: unknown, path: string, problems: FieldProblem[]): unknown {
  if (typeof value === 'string' && PERCENT.test(value)) return Number(value.slice(0, -1));
  problems.push({ path, message: 'must be a percentage from 1% to 100%' });
  return value;
}
