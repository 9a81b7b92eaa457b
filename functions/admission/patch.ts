/**
 * The one place a mutation becomes a JSON Patch (RFC 6902): defaulting changes a copy of the object,
 * and `diff(original, changed)` lists the operations that turn one into the other. Objects are
 * compared key by key; arrays of equal length item by item, otherwise replaced whole.
 */
export type JsonPatchOp =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** RFC 6901 escaping of one path segment. */
export function pointerSegment(segment: string | number): string {
  return String(segment).replaceAll('~', '~0').replaceAll('/', '~1');
}

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

/** Apply a patch produced by `diff` (for tests and for checking the round trip). */
export function applyPatch(doc: unknown, ops: readonly JsonPatchOp[]): unknown {
  let root = structuredClone(doc);
  for (const op of ops) {
    const segments = op.path.split('/').slice(1).map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
    if (segments.length === 0) {
      if (op.op === 'remove') throw new Error('cannot remove the document root');
      root = structuredClone(op.value);
      continue;
    }
    const last = segments.pop() as string;
    let parent: unknown = root;
    for (const s of segments) parent = Object.hasOwn(parent as object, s) ? (parent as Record<string, unknown>)[s] : undefined;
    if (parent === null || typeof parent !== 'object') throw new Error(`no parent for ${op.path}`);
    const target = parent as Record<string, unknown>;
    if (op.op === 'remove') {
      if (Array.isArray(target)) target.splice(Number(last), 1);
      else delete target[last];
    } else if (op.op === 'add' && Array.isArray(target)) {
      target.splice(last === '-' ? target.length : Number(last), 0, structuredClone(op.value));
    } else {
      Object.defineProperty(target, last, { value: structuredClone(op.value), enumerable: true, writable: true, configurable: true });
    }
  }
  return root;
}
