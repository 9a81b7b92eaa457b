import { conditionalMergePatch, type KubeObject, type ResourcePort } from '../../../../shared/kube/index.js';
import type { CachePort } from '../../deps.js';
import type { HandlerContext } from '../../engine/reconciler.js';

/**
 * Put an owner label the controller set on an object it made (a lease's address uid, an address's VM
 * uid) back when someone removed it, as the original does; the write is conditional on the version
 * looked at. Returns whether it wrote.
 */
export async function restoreOwnerLabel<T extends KubeObject>(
  port: { client: Pick<ResourcePort<T>, 'mergePatch'>; cache: Pick<CachePort<T>, 'remember'> },
  obj: T,
  label: string,
  value: string,
  ctx: Pick<HandlerContext, 'signal' | 'log'>,
): Promise<boolean> {
  if (value === '' || obj.metadata.labels?.[label] === value) return false;
  const ref = { namespace: obj.metadata.namespace, name: obj.metadata.name ?? '' };
  const patch = conditionalMergePatch({ metadata: { labels: { [label]: value } } }, obj.metadata.resourceVersion);
  port.cache.remember(await port.client.mergePatch(ref, patch, { signal: ctx.signal }));
  ctx.log.info({ label, value }, 'owner label restored');
  return true;
}
