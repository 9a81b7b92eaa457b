import { pointerSegment } from '../../shared/kube/index.js';

/** The operations a mutating webhook answers with (a subset of shared/kube's JsonPatchOp). */
export type JsonPatchOp = { op: 'add'; path: string; value: unknown } | { op: 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/**
 * The one place a mutation becomes a JSON Patch (RFC 6902): defaulting changes a copy of the object,
 * and `diff(original, changed)` lists the operations that turn one into the other. Objects are
 * compared key by key; arrays of equal length item by item, otherwise replaced whole.
 */
export function diff(original: unknown, changed: unknown, path = ''): JsonPatchOp[] {
  if (Object.is(original, changed)) return [];
  if (isRecord(original) && isRecord(changed)) return diffObjects(original, changed, path);
  if (Array.isArray(original) && Array.isArray(changed) && original.length === changed.length) {
    return original.flatMap((item, i) => diff(item, changed[i], `${path}/${i}`));
  }
  if (jsonEqual(original, changed)) return [];
  return [{ op: 'replace', path, value: changed }];
}

function diffObjects(original: Record<string, unknown>, changed: Record<string, unknown>, path: string): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  for (const key of Object.keys(original)) {
    if (!Object.hasOwn(changed, key)) ops.push({ op: 'remove', path: `${path}/${pointerSegment(key)}` });
  }
  for (const [key, value] of Object.entries(changed)) {
    const at = `${path}/${pointerSegment(key)}`;
    if (!Object.hasOwn(original, key)) ops.push({ op: 'add', path: at, value });
    else ops.push(...diff(original[key], value, at));
  }
  return ops;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function jsonEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
