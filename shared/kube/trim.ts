/**
 * Cache transforms: what an informer store or a lookup cache keeps of an object. `managedFields` (the
 * apiserver's field ownership record, often the largest part of an object's metadata) is read by no
 * unit here; controller-runtime users drop it the same way (`cache.TransformStripManagedFields`).
 */
import type { KubeObject } from './descriptor.js';

/** The object without `metadata.managedFields` (a shallow copy; the same object when it has none). */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (!Object.hasOwn(obj.metadata, 'managedFields')) return obj;
  const metadata: Record<string, unknown> = { ...obj.metadata };
  delete metadata['managedFields'];
  return { ...obj, metadata };
}
