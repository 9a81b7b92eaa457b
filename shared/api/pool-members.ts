/**
 * What makes a VirtualMachine a member of a VirtualMachinePool, shared by the controller (which makes
 * and counts members) and the subresource API (scaleDownWith checks its targets): the pool's uid label
 * scopes, the controller ownerReference decides. A VM that only copies a pool's labels is never a member.
 */
import { canonicalJson, fnv1a32 } from './hash.js';
import { POOL_LABELS, type VirtualMachinePool } from './resources/vmpool.js';

interface Owned {
  metadata: { labels?: Record<string, string> | undefined; ownerReferences?: readonly { uid: string; controller?: boolean | undefined }[] | undefined };
}

/** Whether `obj` is controlled by the pool with `poolUid` (label and controller ownerReference). */
export function isPoolMember(obj: Owned, poolUid: string): boolean {
  if (obj.metadata.labels?.[POOL_LABELS.poolUID] !== poolUid) return false;
  return (obj.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === poolUid);
}

/** The revision of the pool's VM template: FNV-1a 32 of its canonical JSON, in hex (as the original, over its own JSON). */
export function templateHash(pool: Pick<VirtualMachinePool, 'spec'>): string {
  return fnv1a32(canonicalJson(pool.spec.virtualMachineTemplate)).toString(16);
}

/** status.selector: the member label selector the scale subresource publishes. */
export function poolSelector(poolUid: string): string {
  return `${POOL_LABELS.poolUID}=${poolUid}`;
}
