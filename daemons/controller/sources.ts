/** Event sources: which changes of a cache's objects enqueue which keys (the declarations use these). */
import type { KubeObject } from '../../shared/kube/index.js';
import type { ObjectCache } from './engine/cache.js';
import { deepEqual } from './engine/merge-diff.js';

/** Which updates matter to a mapping; the others enqueue nothing (adds and deletes always do). */
export type UpdateFilter<T> = (obj: T, old: T) => boolean;

/**
 * On add, update (old and new) and delete of an object, enqueue the keys `map` gives. A resync (an
 * update of the object with itself) always enqueues: it is the periodic look that heals a missed event.
 */
export function enqueueOn<T extends KubeObject>(
  cache: ObjectCache<T>,
  enqueue: (key: string) => void,
  map: (obj: T) => Iterable<string>,
  matters?: UpdateFilter<T>,
): void {
  const push = (obj: T): void => {
    for (const key of map(obj)) enqueue(key);
  };
  cache.informer.on('add', push);
  cache.informer.on('update', (obj, old) => {
    if (matters !== undefined && obj !== old && !matters(obj, old)) return;
    push(obj);
    push(old);
  });
  cache.informer.on('delete', push);
}

/** The spec (generation) or the metadata the controller acts on changed: not just the status. */
export function specOrMetaChanged(obj: KubeObject, old: KubeObject): boolean {
  const a = obj.metadata;
  const b = old.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    !sameList(a.finalizers, b.finalizers) ||
    !sameRecord(a.annotations, b.annotations) ||
    !sameRecord(a.labels, b.labels)
  );
}

/** Only the status changed (someone else's view of it matters, e.g. a dependency's readiness). */
export function statusChanged(obj: KubeObject & { status?: unknown }, old: KubeObject & { status?: unknown }): boolean {
  return !deepEqual(obj.status, old.status) || specOrMetaChanged(obj, old);
}

/** An operation's siblings wait for its phase; its own status is otherwise ours. */
export function phaseOrMetaChanged(op: { status?: { phase?: string } } & KubeObject, old: { status?: { phase?: string } } & KubeObject): boolean {
  return op.status?.phase !== old.status?.phase || specOrMetaChanged(op, old);
}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return deepEqual(a ?? [], b ?? []);
}

function sameRecord(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  return deepEqual(a ?? {}, b ?? {});
}
