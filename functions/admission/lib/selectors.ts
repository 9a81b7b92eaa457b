/**
 * The parts of Kubernetes pod validation that apply to VM placement: label selectors, node selector
 * requirements, tolerations and topology spread constraints. Each function reports at `path`.
 */
import type { LabelSelector, Toleration } from '../../../shared/api/k8s/core.js';
import type { Findings } from '../decision.js';
import { labelKeyProblem, labelValueProblem } from './names.js';

type Requirement = { readonly key: string; readonly operator: string; readonly values?: readonly string[] | undefined };

export function checkLabelMap(map: Readonly<Record<string, string>> | undefined, path: string, out: Findings): void {
  for (const [key, value] of Object.entries(map ?? {})) {
    const problem = labelKeyProblem(key) ?? labelValueProblem(value);
    if (problem !== undefined) out.deny(`${path}[${key}]`, problem);
  }
}

export function checkLabelSelector(selector: LabelSelector | undefined, path: string, out: Findings): void {
  if (selector === undefined) return;
  checkLabelMap(selector.matchLabels, `${path}.matchLabels`, out);
  selector.matchExpressions?.forEach((r, i) => checkRequirement(r, ['In', 'NotIn', 'Exists', 'DoesNotExist'], `${path}.matchExpressions[${i}]`, out));
}

/** Node selector requirements also allow Gt and Lt with one integer value. */
export function checkNodeRequirement(r: Requirement, path: string, out: Findings): void {
  checkRequirement(r, ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'], path, out);
}

function checkRequirement(r: Requirement, operators: readonly string[], path: string, out: Findings): void {
  const keyProblem = labelKeyProblem(r.key);
  if (keyProblem !== undefined) out.deny(`${path}.key`, keyProblem);
  const values = r.values ?? [];
  if (!operators.includes(r.operator)) {
    out.deny(`${path}.operator`, `must be one of ${operators.join(', ')}`);
  } else if ((r.operator === 'In' || r.operator === 'NotIn') && values.length === 0) {
    out.deny(`${path}.values`, `must be non-empty for operator ${r.operator}`);
  } else if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && values.length > 0) {
    out.deny(`${path}.values`, `must be empty for operator ${r.operator}`);
  } else if ((r.operator === 'Gt' || r.operator === 'Lt') && (values.length !== 1 || !/^-?\d+$/.test(values[0] ?? ''))) {
    out.deny(`${path}.values`, `must be a single integer for operator ${r.operator}`);
  }
}

export function checkTopologyKey(key: string, path: string, out: Findings): void {
  const problem = key === '' ? 'is required' : labelKeyProblem(key);
  if (problem !== undefined) out.deny(path, problem);
}

export function checkWeight(weight: number, path: string, out: Findings): void {
  if (weight < 1 || weight > 100) out.deny(path, 'must be from 1 to 100');
}

const EFFECTS = ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'];

export function checkTolerations(tolerations: readonly Toleration[] | undefined, path: string, out: Findings): void {
  tolerations?.forEach((t, i) => {
    const at = `${path}[${i}]`;
    const operator = t.operator ?? 'Equal';
    if (t.key !== undefined && t.key !== '') {
      const problem = labelKeyProblem(t.key);
      if (problem !== undefined) out.deny(`${at}.key`, problem);
    } else if (operator !== 'Exists') {
      out.deny(`${at}.operator`, 'must be Exists when the key is empty');
    }
    if (operator !== 'Equal' && operator !== 'Exists') out.deny(`${at}.operator`, 'must be Equal or Exists');
    if (operator === 'Exists' && (t.value ?? '') !== '') out.deny(`${at}.value`, 'must be empty for operator Exists');
    if (!EFFECTS.includes(t.effect ?? '')) out.deny(`${at}.effect`, 'must be NoSchedule, PreferNoSchedule or NoExecute');
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') out.deny(`${at}.tolerationSeconds`, 'is allowed only with effect NoExecute');
  });
}

interface SpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: string;
  readonly labelSelector?: LabelSelector | undefined;
  readonly minDomains?: number | undefined;
  readonly nodeAffinityPolicy?: string | undefined;
  readonly nodeTaintsPolicy?: string | undefined;
  readonly matchLabelKeys?: readonly string[] | undefined;
}

export function checkSpreadConstraints(constraints: readonly SpreadConstraint[] | undefined, path: string, out: Findings): void {
  const seen = new Set<string>();
  constraints?.forEach((c, i) => {
    const at = `${path}[${i}]`;
    if (c.maxSkew < 1) out.deny(`${at}.maxSkew`, 'must be greater than 0');
    checkTopologyKey(c.topologyKey, `${at}.topologyKey`, out);
    if (c.whenUnsatisfiable !== 'DoNotSchedule' && c.whenUnsatisfiable !== 'ScheduleAnyway') {
      out.deny(`${at}.whenUnsatisfiable`, 'must be DoNotSchedule or ScheduleAnyway');
    }
    if (c.minDomains !== undefined && (c.minDomains < 1 || c.whenUnsatisfiable !== 'DoNotSchedule')) {
      out.deny(`${at}.minDomains`, 'must be greater than 0 and is allowed only with whenUnsatisfiable DoNotSchedule');
    }
    for (const [field, value] of [
      ['nodeAffinityPolicy', c.nodeAffinityPolicy],
      ['nodeTaintsPolicy', c.nodeTaintsPolicy],
    ] as const) {
      if (value !== undefined && value !== 'Honor' && value !== 'Ignore') out.deny(`${at}.${field}`, 'must be Honor or Ignore');
    }
    const pair = `${c.topologyKey}/${c.whenUnsatisfiable}`;
    if (seen.has(pair)) out.deny(at, `duplicates another constraint on ${c.topologyKey} with ${c.whenUnsatisfiable}`);
    seen.add(pair);
    checkLabelSelector(c.labelSelector, `${at}.labelSelector`, out);
    c.matchLabelKeys?.forEach((k, j) => {
      const problem = labelKeyProblem(k);
      if (problem !== undefined) out.deny(`${at}.matchLabelKeys[${j}]`, problem);
    });
  });
}
