import type { ObjectMeta } from './descriptor.js';

/** One RFC 6902 operation (the subset the apiserver accepts). */
export type JsonPatchOp =
  { op: 'add' | 'replace' | 'test'; path: string; value: unknown } | { op: 'remove'; path: string } | { op: 'move' | 'copy'; from: string; path: string };

/** Content types of the apiserver's PATCH verbs. */
export const PatchType = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

/** Escape one JSON Pointer segment (RFC 6901): `~` → `~0`, `/` → `~1`. */
export function pointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A JSON Pointer from unescaped segments: `['metadata', 'labels', 'a/b']` → `/metadata/labels/a~1b`. */
export function pointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${pointerSegment(String(s))}`).join('');
}

/**
 * Operations that add a finalizer, or undefined when it is already there. The operations carry a
 * `test` guard so a concurrent writer makes the patch fail (422) instead of losing an update: on the
 * current list when there is one, on the resourceVersion when the list is absent.
 */
export function addFinalizerOps(meta: ObjectMeta, finalizer: string): JsonPatchOp[] | undefined {
  const current = meta.finalizers;
  if (current?.includes(finalizer)) return undefined;
  if (current !== undefined && current.length > 0) {
    return [
      { op: 'test', path: '/metadata/finalizers', value: current },
      { op: 'add', path: '/metadata/finalizers/-', value: finalizer },
    ];
  }
  if (meta.resourceVersion === undefined) {
    throw new TypeError('adding the first finalizer needs metadata.resourceVersion as a concurrency guard');
  }
  return [
    { op: 'test', path: '/metadata/resourceVersion', value: meta.resourceVersion },
    { op: 'add', path: '/metadata/finalizers', value: [finalizer] },
  ];
}

/**
 * Operations that remove every occurrence of a finalizer, or undefined when it is absent. Each removal
 * first tests that the index still holds this finalizer; indexes go from last to first so earlier
 * removals do not shift later ones.
 */
export function removeFinalizerOps(meta: ObjectMeta, finalizer: string): JsonPatchOp[] | undefined {
  const current = meta.finalizers ?? [];
  const ops: JsonPatchOp[] = [];
  for (let i = current.length - 1; i >= 0; i--) {
    if (current[i] !== finalizer) continue;
    ops.push({ op: 'test', path: `/metadata/finalizers/${i}`, value: finalizer });
    ops.push({ op: 'remove', path: `/metadata/finalizers/${i}` });
  }
  return ops.length > 0 ? ops : undefined;
}

/**
 * A JSON merge patch made conditional on the resourceVersion its writer decided on: the apiserver
 * answers 409 Conflict if anyone wrote the object since, instead of merging into a newer version.
 * Used for objects that more than one writer changes (the internal VM, leases).
 */
export function conditionalMergePatch<P extends object>(patch: P, resourceVersion: string | undefined): P & { metadata: { resourceVersion: string } } {
  if (resourceVersion === undefined || resourceVersion === '') {
    throw new TypeError('a conditional merge patch needs the resourceVersion it was decided on');
  }
  const metadata = (patch as { metadata?: object }).metadata;
  return { ...patch, metadata: { ...metadata, resourceVersion } };
}

/** The JSON merge patch body that sets `status` (sent to the `/status` subresource). */
export function statusMergePatch(status: unknown): { status: unknown } {
  return { status };
}

/** A JSON Patch `test` operation did not match (the apiserver answers 422). */
export class PatchTestFailedError extends Error {
  constructor(readonly path: string) {
    super(`JSON patch test failed at ${path}`);
    this.name = 'PatchTestFailedError';
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Apply a JSON merge patch (RFC 7386) to a copy of `target`: null deletes, objects merge, the rest replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}

/**
 * Apply JSON Patch operations (RFC 6902: add, remove, replace, test; move and copy are not needed
 * here and throw) to a copy of `doc`. A failed `test` throws PatchTestFailedError; a path that does
 * not exist throws a TypeError naming it. For in-memory stand-ins of the apiserver and round-trip tests.
 */
export function applyJsonPatch(doc: unknown, ops: readonly JsonPatchOp[]): unknown {
  let root = structuredClone(doc);
  for (const op of ops) {
    const segments = op.path
      .split('/')
      .slice(1)
      .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
    if (op.op === 'move' || op.op === 'copy') throw new TypeError(`JSON patch op ${op.op} is not supported`);
    const value = 'value' in op ? op.value : undefined;
    if (op.op === 'test') {
      if (JSON.stringify(valueAt(root, segments)) !== JSON.stringify(value)) throw new PatchTestFailedError(op.path);
      continue;
    }
    const last = segments.pop();
    if (last === undefined) {
      if (op.op === 'remove') throw new TypeError('cannot remove the document root');
      root = structuredClone(value);
      continue;
    }
    const parent = valueAt(root, segments);
    if (parent === null || typeof parent !== 'object') throw new TypeError(`JSON patch: no parent for ${op.path}`);
    const target = parent as Record<string, unknown>;
    if (Array.isArray(target)) {
      const index = last === '-' ? target.length : Number(last);
      if (!Number.isInteger(index) || index < 0 || index > target.length) throw new TypeError(`JSON patch: bad index in ${op.path}`);
      if (op.op === 'remove') target.splice(index, 1);
      else target.splice(index, op.op === 'replace' ? 1 : 0, structuredClone(value));
    } else if (op.op === 'remove') {
      if (!Object.hasOwn(target, last)) throw new TypeError(`JSON patch: nothing to remove at ${op.path}`);
      delete target[last];
    } else {
      Object.defineProperty(target, last, { value: structuredClone(value), enumerable: true, writable: true, configurable: true });
    }
  }
  return root;
}

function valueAt(doc: unknown, segments: readonly string[]): unknown {
  let at = doc;
  for (const s of segments) at = at !== null && typeof at === 'object' && Object.hasOwn(at, s) ? (at as Record<string, unknown>)[s] : undefined;
  return at;
}
