/**
 * virt-handler's part of a live migration, on what virt-controller's migration controller wrote on
 * the instance (`migrationState` with the target node and pod, after the hand-off), as KubeVirt
 * v1.6's handlers do it: the target's handler, once its pod runs, prepares and gives its address
 * (`targetNodeAddress`); the source's handler then starts (`startTimestamp`, mode PreCopy) and, after
 * the copy (MIGRATION_DELAY), the migration completes: `completed`, `endTimestamp`, the target's
 * domain detected and ready, and the instance's node (status and label) is the target, its
 * `evacuationNodeName` (a drain's mark) cleared. The source
 * launcher then exits: here its pod is deleted, as kwok runs no launcher process that could end it.
 * False flags are left out, as KubeVirt's Go types omit them (`omitempty`): virt-controller's JSON
 * patches test the whole `migrationState` it read, and a stored `failed: false` it cannot see would
 * fail that test (422) on the instance's next migration, which then stalls at Scheduled.
 */
import { MIGRATION_TARGET_NODE_LABEL, NODE_NAME_LABEL } from '../../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { now, ref, remove, type StepContext } from '../context.js';
import { writeInstance } from './write.js';
import type { LauncherPod } from '../kube.js';
import { podState } from '../launcher.js';
import { handleRealMigration } from './real-migration.js';

type VMI = InternalVirtualMachineInstance;

/** One step of the migration of `vmi`, when one is handed off and unfinished (with real guests: `real-migration.ts`). */
export async function handleMigration(ctx: StepContext, vmi: VMI, pods: readonly LauncherPod[]): Promise<void> {
  if (ctx.guests !== undefined) return handleRealMigration(ctx, ctx.guests, vmi, pods);
  const state = vmi.status?.migrationState;
  if (vmi.status?.phase !== 'Running' || !state?.targetNode || !state.migrationUid || state.completed === true || state.failed === true) return;
  const namespace = vmi.metadata.namespace ?? '';
  const key = `${namespace}/${vmi.metadata.name ?? ''}`;
  // writeInstance writes the migration state as Go does (no false, empty or null fields): virt-controller tests it whole.
  const patch = (status: Record<string, unknown>, labels?: Record<string, string | null>): Promise<VMI> =>
    writeInstance(ctx, vmi, { status, ...(labels === undefined ? {} : { labels }) });
  const target = pods.find((p) => p.metadata.name === state.targetPod);
  if (!state.targetNodeAddress) {
    if (target === undefined || podState(target) !== 'running') return;
    ctx.log.info({ vm: key, node: state.targetNode }, 'migration target prepared');
    await patch({ migrationState: { ...state, targetNodeAddress: target.status?.podIP ?? '127.0.0.1' } });
    return;
  }
  if (!state.startTimestamp) {
    ctx.log.info({ vm: key, from: state.sourceNode, to: state.targetNode }, 'migration started');
    await patch({ migrationState: { ...state, startTimestamp: now(), mode: 'PreCopy' } });
    return;
  }
  const copyKey = `copy:${state.migrationUid}`;
  if (!ctx.elapsed(copyKey, ctx.migrationDelayMs, key)) return;
  ctx.forget(copyKey);
  const at = now();
  const done = { ...state, endTimestamp: at, completed: true, targetNodeDomainDetected: true, targetNodeDomainReadyTimestamp: at };
  ctx.log.info({ vm: key, node: state.targetNode }, 'migration completed; the guest runs on the target');
  // As KubeVirt's handler: the instance left the node it was evacuated from, so the mark goes.
  await patch(
    { nodeName: state.targetNode, migrationState: done, evacuationNodeName: null, ...migratedVolumesDone(vmi) },
    { [NODE_NAME_LABEL]: state.targetNode, [MIGRATION_TARGET_NODE_LABEL]: null },
  );
  const source = state.sourcePod;
  if (source) await remove(() => ctx.c.pods.delete(ref(namespace, source)));
}

/**
 * virt-handler on the target, when a migration finishes (`finalizeMigration`): the volumes' status
 * names the destination claims, and the volume change is over (`migratedVolumes` and `VolumesChange` gone).
 */
export function migratedVolumesDone(vmi: VMI): Record<string, unknown> {
  const migrated = vmi.status?.migratedVolumes ?? [];
  if (migrated.length === 0) return {};
  const swap = new Map(migrated.map((m) => [m.sourcePVCInfo?.claimName ?? '', m.destinationPVCInfo]));
  const volumeStatus = (vmi.status?.volumeStatus ?? []).map((v) => {
    const info = v['persistentVolumeClaimInfo'] as { claimName?: string } | undefined;
    const dest = info?.claimName === undefined ? undefined : swap.get(info.claimName);
    return dest === undefined ? v : { ...v, persistentVolumeClaimInfo: { ...info, ...dest } };
  });
  const conditions = (vmi.status?.conditions ?? []).filter((c) => c.type !== 'VolumesChange');
  return { migratedVolumes: null, conditions, volumeStatus };
}
