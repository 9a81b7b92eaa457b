/** Rules shared by disks, images and pool disk templates: size, storage class, frozen specs. */
import type { VirtualDisk } from '../../../shared/api/resources/virtualdisk.js';
import { joinPath, type Findings } from '../decision.js';
import { parseQuantity } from '../../../shared/api/k8s/quantity.js';
import type { RuleContext } from '../lookups.js';
import { onUpdate, type Check } from './check.js';

type DiskSpec = VirtualDisk['spec'];

/** Size rules of a disk spec; `path` is where the spec sits (`spec`, `spec.virtualDiskTemplates[0].spec`). */
export function diskSizeProblems(spec: DiskSpec, path: string, out: Findings): void {
  const raw = spec.persistentVolumeClaim?.size;
  const at = joinPath(path, 'persistentVolumeClaim.size');
  if (raw === undefined) {
    if (spec.dataSource === undefined) out.deny(at, 'is required for a blank disk (no dataSource)');
    return;
  }
  const size = parseQuantity(raw);
  if (size === undefined || size <= 0) out.deny(at, 'must be greater than 0');
}

/** A named storage class must exist. */
export async function storageClassExists(name: string | undefined, path: string, ctx: RuleContext, out: Findings): Promise<void> {
  if (name === undefined || name === '') return;
  if ((await ctx.lookups.storageClass(name)) === undefined) out.deny(path, `StorageClass ${name} does not exist`);
}

interface Frozen {
  readonly metadata: { readonly deletionTimestamp?: string | undefined };
  readonly spec: unknown;
}

/** Once deletion has started, the spec no longer changes. */
export function specFrozenWhileDeleting<T extends Frozen>(kind: string): Check<T> {
  return onUpdate(`the spec does not change while the ${kind} is being deleted`, ({ object }, old, _ctx, out) => {
    if (old.metadata.deletionTimestamp === undefined) return;
    if (JSON.stringify(object.spec) !== JSON.stringify(old.spec)) out.deny('spec', `cannot change while the ${kind} is being deleted`);
  });
}

/** Provisioning has begun (the phase moved past Pending): data source and class are then fixed. */
export function provisioned(status: { readonly phase?: string | undefined } | undefined): boolean {
  return status?.phase !== undefined && status.phase !== 'Pending';
}

export function changed(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) !== JSON.stringify(b);
}
