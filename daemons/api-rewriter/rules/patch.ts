/**
 * PATCH bodies: merge and strategic merge patches are partial objects (rewritten like one, the kind
 * taken from the endpoint); JSON Patch operations get their `path`/`from` and `value` rewritten by
 * placing the value at its path in a skeleton object, rewriting that, and reading path and value back.
 */
import { isRecord, type Direction, type Renamer } from './names.js';
import { rewriteObject } from './objects.js';

export type PatchKind = 'json' | 'merge' | 'strategic' | 'apply';

export class PatchError extends Error {
  override readonly name = 'PatchError';
}

/** The patch kind of a Content-Type, undefined for types that are not patches. */
export function patchKindOf(contentType: string): PatchKind | undefined {
  const base = contentType.split(';')[0]?.trim().toLowerCase();
  switch (base) {
    case 'application/json-patch+json':
      return 'json';
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/apply-patch+yaml':
    case 'application/apply-patch+cbor':
      return 'apply';
    default:
      return undefined;
  }
}

/** Rewrite a parsed patch document in place; `hintKind` is the original kind of the patched endpoint. */
export function rewritePatch(r: Renamer, kind: PatchKind, patch: unknown, dir: Direction, hintKind: string | undefined): unknown {
  if (kind !== 'json') {
    if (!isRecord(patch)) throw new PatchError(`a ${kind} patch must be a JSON object`);
    return rewriteObject(r, patch, dir, hintKind);
  }
  if (!Array.isArray(patch)) throw new PatchError('a JSON Patch must be an array of operations');
  return patch.map((op: unknown, i) => {
    if (!isRecord(op) || typeof op.op !== 'string' || typeof op.path !== 'string') {
      throw new PatchError(`JSON Patch operation ${i} needs string "op" and "path"`);
    }
    return rewriteOperation(r, op, dir, hintKind);
  });
}

function rewriteOperation(r: Renamer, op: Record<string, unknown>, dir: Direction, hintKind: string | undefined): Record<string, unknown> {
  const out = { ...op };
  const { path, value } = rewriteAt(r, op.path as string, 'value' in op ? op.value : null, dir, hintKind);
  out.path = path;
  if ('value' in op) out.value = value;
  if (typeof op.from === 'string') out.from = rewriteAt(r, op.from, null, dir, hintKind).path;
  return out;
}

const INDEX = /^(?:\d+|-)$/;

function rewriteAt(r: Renamer, pointer: string, value: unknown, dir: Direction, hintKind: string | undefined): { path: string; value: unknown } {
  if (pointer === '') return { path: '', value: rewriteObject(r, value, dir, hintKind) };
  if (!pointer.startsWith('/')) throw new PatchError(`JSON Patch path ${JSON.stringify(pointer)} must start with "/"`);
  const segments = pointer.slice(1).split('/').map(unescapePointer);
  // Build the skeleton: one key (or a one-element array) per segment, the value at the end.
  const root: Record<string, unknown> = {};
  let parent: Record<string, unknown> | unknown[] = root;
  for (const [i, seg] of segments.entries()) {
    const isLast = i === segments.length - 1;
    const next: unknown = isLast ? value : INDEX.test(segments[i + 1] ?? '') ? [] : {};
    if (Array.isArray(parent)) parent.push(next);
    else parent[seg] = next;
    if (!isLast) parent = next as Record<string, unknown> | unknown[];
  }
  rewriteObject(r, root, dir, hintKind);
  // Read the (possibly renamed) keys back along the same shape.
  const outSegs: string[] = [];
  let node: unknown = root;
  for (const seg of segments) {
    if (Array.isArray(node)) {
      outSegs.push(seg);
      node = node[0];
    } else if (isRecord(node)) {
      const only = Object.keys(node)[0] ?? seg;
      outSegs.push(only);
      node = node[only];
    }
  }
  return { path: '/' + outSegs.map(escapePointer).join('/'), value: node };
}

function unescapePointer(seg: string): string {
  return seg.replace(/~1/g, '/').replace(/~0/g, '~');
}

function escapePointer(seg: string): string {
  return seg.replace(/~/g, '~0').replace(/\//g, '~1');
}
