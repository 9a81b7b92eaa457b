/**
 * The RFC 7386 JSON merge patch that turns `from` into `to`: changed or new keys carry their new
 * value, removed keys carry null, nested objects recurse, arrays and scalars are replaced whole.
 * Returns undefined when nothing differs.
 */
export function mergeDiff(from: unknown, to: unknown): unknown {
  if (isPlainObject(from) && isPlainObject(to)) {
    const patch: Record<string, unknown> = {};
    for (const key of Object.keys(from)) {
      if (!(key in to) || to[key] === undefined) {
        if (from[key] !== undefined) patch[key] = null;
      }
    }
    for (const [key, value] of Object.entries(to)) {
      if (value === undefined) continue;
      const sub = mergeDiff(from[key], value);
      if (sub !== undefined) patch[key] = sub;
    }
    return Object.keys(patch).length === 0 ? undefined : patch;
  }
  if (deepEqual(from, to)) return undefined;
  return isPlainObject(to) ? stripUndefined(to) : to;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Structural equality of JSON-like values; undefined object members count as absent. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) if (!deepEqual(a[key], b[key])) return false;
    return true;
  }
  return false;
}

function stripUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}
