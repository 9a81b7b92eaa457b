/**
 * DVCR garbage collection in pure parts: the result the cleaner reports, which images and disks still
 * import through DVCR, and which repositories and tags of DVCR no live object owns. Where a run stands
 * (its Secret) is in provisioning/postpone.ts, which the image and disk reconcilers read too.
 */
import { z } from 'zod';
import { VDCondition } from '../../../../shared/api/conditions/index.js';
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import type { ClusterVirtualImage, VirtualImage } from '../../../../shared/api/resources/virtualimage.js';
import { diskUsesDvcr } from '../provisioning/postpone.js';

export const DVCR_DEPLOYMENT_NAME = 'dvcr';
/** The queue key the schedule enqueues (the original's cron source object). */
export const RUN_KEY = '__cron_source__/run-gc';

/** What the cleaner reports in the Secret's `data.result` (JSON), as the original's cleaner does. */
export const GcResultSchema = z.looseObject({
  result: z.enum(['success', 'fail']),
  message: z.string().optional(),
  error: z.string().optional(),
});
export type GcResult = z.infer<typeof GcResultSchema>;

/** The result as the Deployment condition states it; an unreadable result is an Error naming it. */
export function conditionOfResult(raw: string | undefined): { reason: 'Completed' | 'Error'; message: string } {
  if (raw === undefined || raw === '') return { reason: 'Error', message: 'the garbage collection finished without a result' };
  let parsed: GcResult;
  try {
    parsed = GcResultSchema.parse(JSON.parse(raw));
  } catch {
    return { reason: 'Error', message: `the garbage collection result is unreadable: ${raw.slice(0, 200)}` };
  }
  return parsed.result === 'success'
    ? { reason: 'Completed', message: parsed.message ?? 'Garbage collection completed.' }
    : { reason: 'Error', message: parsed.error ?? parsed.message ?? 'Garbage collection failed.' };
}

type Conditioned = { status?: { conditions?: readonly { type: string; status: string; reason?: string | undefined }[] | undefined } | undefined };

const provisioningNow = (o: Conditioned): boolean =>
  o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'False' && c.reason === VDCondition.Ready.reason.Provisioning) === true;

/** How many images and disks are importing through DVCR now: the run waits for them (the original's rule). */
export function importsInProgress(o: {
  clusterImages: readonly ClusterVirtualImage[];
  images: readonly VirtualImage[];
  disks: readonly VirtualDisk[];
}): number {
  return (
    o.clusterImages.filter(provisioningNow).length +
    o.images.filter(provisioningNow).length +
    o.disks.filter((vd) => diskUsesDvcr(vd) && provisioningNow(vd)).length
  );
}

/** A DVCR repository path the module writes: `cvi/<name>`, `vi/<ns>/<name>`, `vd/<ns>/<name>`; others are not ours. */
export function ownerOfRepository(repo: string): { kind: 'cvi' | 'vi' | 'vd'; key: string } | undefined {
  const parts = repo.split('/');
  if (parts[0] === 'cvi' && parts.length === 2) return { kind: 'cvi', key: parts[1] ?? '' };
  if ((parts[0] === 'vi' || parts[0] === 'vd') && parts.length === 3) return { kind: parts[0], key: `${parts[1] ?? ''}/${parts[2] ?? ''}` };
  return undefined;
}

/**
 * The uids whose DVCR images are still wanted, per repository: every ClusterVirtualImage and
 * VirtualImage, and every VirtualDisk not Ready yet (a Ready disk's DVCR copy is garbage, as in the
 * original). The tag of an image is its owner's uid, so a tag of an earlier object of the same name
 * is garbage too.
 */
export function wantedTags(o: {
  clusterImages: readonly ClusterVirtualImage[];
  images: readonly VirtualImage[];
  disks: readonly VirtualDisk[];
}): Map<string, Set<string>> {
  const wanted = new Map<string, Set<string>>();
  const add = (repo: string, uid: string | undefined): void => {
    const set = wanted.get(repo) ?? new Set<string>();
    set.add(uid ?? '');
    wanted.set(repo, set);
  };
  for (const c of o.clusterImages) add(`cvi/${c.metadata.name ?? ''}`, c.metadata.uid);
  for (const i of o.images) add(`vi/${i.metadata.namespace ?? ''}/${i.metadata.name ?? ''}`, i.metadata.uid);
  for (const d of o.disks) if (d.status?.phase !== 'Ready') add(`vd/${d.metadata.namespace ?? ''}/${d.metadata.name ?? ''}`, d.metadata.uid);
  return wanted;
}

/** The tags of `repo` that no live owner wants (none for a repository that is not ours). */
export function garbageTags(repo: string, tags: readonly string[], wanted: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  if (ownerOfRepository(repo) === undefined) return [];
  const keep = wanted.get(repo);
  return tags.filter((t) => keep?.has(t) !== true);
}
