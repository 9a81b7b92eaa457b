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
  walk(applied, desired, [], out);
  return out.filter((c) => !IMMEDIATE_FIELDS.has(c.path.split('.')[0] ?? ''));
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
