/**
 * Retain-policy disks: pool-owned, reused by later members. A free one (no live member refers to it)
 * carries the free-since annotation; beyond the `keep` most recently freed, free disks older than
 * `ttl` are deleted. Without a ttl free disks are kept.
 */
import { isPoolMember } from '../../../../shared/api/pool-members.js';
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import { POOL_LABELS, type VirtualMachinePool } from '../../../../shared/api/resources/vmpool.js';
import { parseDurationMs } from '../../../../shared/config/index.js';
import { ConflictError, NotFoundError } from '../../../../shared/errors/index.js';
import type { Deps } from '../../deps.js';
import { rfc3339 } from '../../engine/conditions.js';
import type { HandlerContext, HandlerOutcome } from '../../engine/reconciler.js';
import { isRetain, type DiskTemplate } from './members.js';
import { BY_POOL_UID } from './parts.js';

/** The pool's own (Retain) disks of template `t`. */
function retainDisks(deps: Deps, pool: VirtualMachinePool, t: DiskTemplate): VirtualDisk[] {
  return deps.caches.disks
    .byIndex(BY_POOL_UID, pool.metadata.uid ?? '')
    .filter((d) => d.metadata.labels?.[POOL_LABELS.diskTemplate] === t.name && isPoolMember(d, pool.metadata.uid ?? ''));
}

const referencedBy = (members: readonly VirtualMachine[]): Set<string> =>
  new Set(members.flatMap((m) => m.spec.blockDeviceRefs.filter((r) => r.kind === 'VirtualDisk').map((r) => r.name)));

/** The pool's Retain disks of `t` no live member refers to and none was handed this pass. */
export function collectFreeDisks(
  deps: Deps,
  pool: VirtualMachinePool,
  t: DiskTemplate,
  members: readonly VirtualMachine[],
  assigned: ReadonlySet<string>,
): VirtualDisk[] {
  const used = referencedBy(members);
  return retainDisks(deps, pool, t).filter(
    (d) => !used.has(d.metadata.name ?? '') && !assigned.has(d.metadata.name ?? '') && d.metadata.deletionTimestamp === undefined,
  );
}

const freeSince = (d: VirtualDisk): number => Date.parse(d.metadata.annotations?.[POOL_LABELS.freeSince] ?? '') || 0;

/** Stamp free disks, unstamp used ones, delete the expired; requeue when the next one expires. */
export async function poolDisks(
  deps: Deps,
  pool: VirtualMachinePool,
  members: readonly VirtualMachine[],
  assigned: ReadonlySet<string>,
  ctx: HandlerContext,
): Promise<HandlerOutcome | void> {
  const used = referencedBy(members);
  const opts = { signal: ctx.signal };
  let requeueAfterMs: number | undefined;
  for (const t of pool.spec.virtualDiskTemplates.filter(isRetain)) {
    const free: VirtualDisk[] = [];
    for (const d of retainDisks(deps, pool, t)) {
      const name = d.metadata.name ?? '';
      const ref = { namespace: d.metadata.namespace, name };
      const stamped = d.metadata.annotations?.[POOL_LABELS.freeSince] !== undefined;
      const inUse = used.has(name) || assigned.has(name);
      if (inUse && stamped)
        deps.caches.disks.remember(await deps.clients.disks.mergePatch(ref, { metadata: { annotations: { [POOL_LABELS.freeSince]: null } } }, opts));
      if (inUse || d.metadata.deletionTimestamp !== undefined) continue;
      free.push(
        stamped
          ? d
          : deps.caches.disks.remember(
              await deps.clients.disks.mergePatch(ref, { metadata: { annotations: { [POOL_LABELS.freeSince]: rfc3339(ctx.now) } } }, opts),
            ),
      );
    }
    const ttlMs = t.reclaim?.ttl === undefined ? undefined : parseDurationMs(t.reclaim.ttl);
    if (ttlMs === undefined) continue;
    free.sort((a, b) => freeSince(b) - freeSince(a));
    for (const d of free.slice(t.reclaim?.keep ?? 0)) {
      const left = freeSince(d) + ttlMs - ctx.now.getTime();
      if (left > 0) {
        requeueAfterMs = Math.min(requeueAfterMs ?? left, left);
        continue;
      }
      try {
        await deps.clients.disks.delete(
          { namespace: d.metadata.namespace, name: d.metadata.name ?? '' },
          { ...opts, preconditions: { resourceVersion: d.metadata.resourceVersion ?? '' } },
        );
        ctx.log.info({ disk: d.metadata.name }, 'deleted a free pool disk past its ttl');
      } catch (err: unknown) {
        if (!(err instanceof NotFoundError) && !(err instanceof ConflictError)) throw err;
      }
    }
  }
  return requeueAfterMs === undefined ? undefined : { requeueAfterMs: Math.max(1000, requeueAfterMs + 1000) };
}
