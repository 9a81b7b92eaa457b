/**
 * The controller's cleanup finalizer, set when the object is created: the controller would add it in
 * a separate write right after the create (it still does when it is missing, e.g. for an object made
 * while this webhook was down). Only on CREATE: a deleting object must not get new finalizers, and
 * an update that dropped it gets it back from the controller.
 */
type Json = Record<string, unknown>;

function record(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

/**
 * Add `finalizer` to `metadata.finalizers` of `changed` (in place) unless it is there. A raw object
 * whose metadata or finalizers are not of the expected shape is left alone: the apiserver's own
 * validation answers that, and the controller still adds the finalizer later.
 */
export function addCreateFinalizer(changed: Json, finalizer: string): void {
  const metadata = record(changed['metadata']);
  if (metadata === undefined || metadata['deletionTimestamp'] !== undefined) return;
  const current: unknown = metadata['finalizers'];
  if (current === undefined || current === null) {
    metadata['finalizers'] = [finalizer];
    return;
  }
  if (!Array.isArray(current) || !current.every((f): f is string => typeof f === 'string')) return;
  if (!current.includes(finalizer)) metadata['finalizers'] = [...current, finalizer];
}
