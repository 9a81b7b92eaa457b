import { ConflictError, KubeApiError } from '../errors/index.js';
import { refOf, type KubeObject, type ObjectMeta } from './descriptor.js';
import { addFinalizerOps, removeFinalizerOps, type JsonPatchOp } from './patch.js';
import type { CallOptions, ResourcePort } from './resource-client.js';

const ATTEMPTS = 5;

export function hasFinalizer(obj: { metadata: ObjectMeta }, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

/**
 * Add a finalizer if it is missing; returns the object as stored. Idempotent, and safe against
 * concurrent writers: the JSON patch tests the list it extends (or the resourceVersion), and a failed
 * test (422) or conflict (409) re-reads the object and tries again.
 */
export async function addFinalizer<T extends KubeObject>(client: ResourcePort<T>, obj: T, finalizer: string, opts: CallOptions = {}): Promise<T> {
  return patchUntilSettled(client, obj, (meta) => addFinalizerOps(meta, finalizer), opts);
}

/** Remove a finalizer if present (every copy); idempotent and guarded like addFinalizer. */
export async function removeFinalizer<T extends KubeObject>(client: ResourcePort<T>, obj: T, finalizer: string, opts: CallOptions = {}): Promise<T> {
  return patchUntilSettled(client, obj, (meta) => removeFinalizerOps(meta, finalizer), opts);
}

async function patchUntilSettled<T extends KubeObject>(
  client: ResourcePort<T>,
  start: T,
  build: (meta: ObjectMeta) => JsonPatchOp[] | undefined,
  opts: CallOptions,
): Promise<T> {
  let current = start;
  for (let attempt = 1; ; attempt++) {
    const ops = build(current.metadata);
    if (ops === undefined) return current;
    try {
      return await client.jsonPatch(refOf(current), ops, opts);
    } catch (err: unknown) {
      if (!isStale(err) || attempt >= ATTEMPTS) throw err;
      current = await client.get(refOf(current), opts);
    }
  }
}

/** A failed JSON patch `test` (422) or a resourceVersion conflict (409): our copy was stale. */
function isStale(err: unknown): boolean {
  return err instanceof ConflictError || (err instanceof KubeApiError && err.status === 422);
}
