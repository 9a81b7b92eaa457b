import { deepEqual, isPlainObject } from '../../engine/merge-diff.js';

/** One spec change that waits for a restart (status.restartAwaitingChanges item). */
export interface PendingChange {
  operation: 'add' | 'remove' | 'replace';
  path: string;
  currentValue?: unknown;
  desiredValue?: unknown;
}

/**
 * Spec fields that change nothing in the instance template, or are hot-plugged into the running
 * instance (`usbDevices`, through addresourceclaim): applied at once, never awaiting a restart.
 */
const IMMEDIATE_FIELDS = new Set(['runPolicy', 'disruptions', 'liveMigrationPolicy', 'usbDevices']);

/**
 * The changes between the spec the running instance was built from and the current spec, as leaf
 * paths (`cpu.cores`, `memory.size`); lists are compared whole. Fields applied at once are left out.
 */
export function pendingChanges(applied: unknown, desired: unknown): PendingChange[] {
  const out: PendingChange[] = [];
  walk(withDefaultFraction(applied), withDefaultFraction(desired), [], out);
  return joinCpu(
    out.filter((c) => !IMMEDIATE_FIELDS.has(c.path.split('.')[0] ?? '')),
    applied,
    desired,
  );
}

/** The original's default core fraction: an empty one and `100%` are the same value. */
const DEFAULT_CORE_FRACTION = '100%';

function withDefaultFraction(spec: unknown): unknown {
  if (!isPlainObject(spec) || !isPlainObject(spec['cpu']) || spec['cpu']['coreFraction'] !== undefined) return spec;
  return { ...spec, cpu: { ...spec['cpu'], coreFraction: DEFAULT_CORE_FRACTION } };
}

/** Cores and core fraction changed together: one `cpu` replace with both whole sections, as the original lists it. */
function joinCpu(changes: PendingChange[], applied: unknown, desired: unknown): PendingChange[] {
  const cpuPaths = new Set(['cpu.cores', 'cpu.coreFraction']);
  if (changes.filter((c) => cpuPaths.has(c.path)).length < 2) return changes;
  const cpuOf = (spec: unknown): unknown => (isPlainObject(spec) ? spec['cpu'] : undefined);
  const joined: PendingChange = { operation: 'replace', path: 'cpu', currentValue: cpuOf(applied), desiredValue: cpuOf(desired) };
  const rest = changes.filter((c) => !cpuPaths.has(c.path));
  return [...rest, joined].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function walk(current: unknown, desired: unknown, path: string[], out: PendingChange[]): void {
  if (deepEqual(current, desired)) return;
  if (isPlainObject(current) && isPlainObject(desired)) {
    const keys = [...new Set([...Object.keys(current), ...Object.keys(desired)])].sort();
    for (const key of keys) walk(current[key], desired[key], [...path, key], out);
    return;
  }
  const at = path.join('.');
  if (current === undefined) out.push({ operation: 'add', path: at, desiredValue: desired });
  else if (desired === undefined) out.push({ operation: 'remove', path: at, currentValue: current });
  else out.push({ operation: 'replace', path: at, currentValue: current, desiredValue: desired });
}
