/**
 * A live migration as KubeVirt runs it, with launcher pods: a target pod kept off the source node,
 * placed by the real scheduler; phases Pending → Scheduling → Scheduled → TargetReady → Running →
 * Succeeded, the instance's migrationState filled along the way and its node switched at the end.
 * A target that cannot be placed fails the migration after a timeout; a deleted migration is
 * cancelled (its target pod removed).
 */
import type { InternalVirtualMachineInstance, InternalVirtualMachineInstanceMigration } from '../../../shared/api/internal/resources.js';
import { now, ref, remove, type StepContext } from './context.js';
import type { LauncherPod } from './kube.js';
import { activePod } from './instance.js';
import { buildLauncherPod, MIGRATION_LABEL, podState } from './launcher.js';

type VMI = InternalVirtualMachineInstance;
type VMIM = InternalVirtualMachineInstanceMigration;

const FINAL = new Set(['Succeeded', 'Failed']);
export const isFinished = (m: VMIM): boolean => FINAL.has(m.status?.phase ?? '');

/** Target pods whose migration is gone or finished without them: removed (a cancel, or a failure). */
export async function deleteOrphanTargets(ctx: StepContext, vmi: VMI | undefined, live: readonly VMIM[], pods: readonly LauncherPod[]): Promise<void> {
  const liveUids = new Set(live.map((m) => m.metadata.uid ?? ''));
  const active = vmi === undefined ? undefined : activePod(vmi, pods);
  for (const p of pods) {
    const migration = p.metadata.labels?.[MIGRATION_LABEL];
    if (migration === undefined || liveUids.has(migration) || p === active || p.metadata.deletionTimestamp !== undefined) continue;
    ctx.log.info({ pod: p.metadata.name, migration }, 'removing the target pod of a cancelled or failed migration');
    await remove(() => ctx.c.pods.delete(ref(p.metadata.namespace ?? '', p.metadata.name ?? '')));
  }
  const state = vmi?.status?.migrationState;
  if (
    vmi !== undefined &&
    state?.migrationUid &&
    state.startTimestamp &&
    state.completed !== true &&
    state.failed !== true &&
    !liveUids.has(state.migrationUid)
  ) {
    await ctx.c.kvvmis.mergePatch(ref(vmi.metadata.namespace ?? '', vmi.metadata.name ?? ''), {
      status: { migrationState: { ...state, abortStatus: 'Succeeded', failed: true, endTimestamp: now() } },
    });
  }
}

/** One step of one unfinished migration of `vmi`. */
export async function advanceMigration(ctx: StepContext, m: VMIM, vmi: VMI | undefined, pods: readonly LauncherPod[]): Promise<void> {
  const namespace = m.metadata.namespace ?? '';
  const key = `${namespace}/${m.spec.vmiName}`;
  const phase = m.status?.phase ?? '';
  const setPhase = async (next: string, extra: Record<string, unknown> = {}): Promise<void> => {
    const transitions = [...(m.status?.phaseTransitionTimestamps ?? []), { phase: next, phaseTransitionTimestamp: now() }];
    await ctx.c.migrations.patchStatus(ref(namespace, m.metadata.name ?? ''), { phase: next, phaseTransitionTimestamps: transitions, ...extra });
    ctx.log.info({ vm: key, migration: m.metadata.name, phase: next }, 'migration phase');
  };
  const fail = async (why: string): Promise<void> => {
    ctx.log.warn({ vm: key, migration: m.metadata.name, why }, 'migration failed');
    await setPhase('Failed', { conditions: [{ type: 'Failed', status: 'True', reason: 'MigrationFailed', message: why }] });
  };
  if (vmi === undefined || vmi.status?.phase !== 'Running') return fail('the instance is not running');
  const source = activePod(vmi, pods);
  const target = pods.find((p) => p.metadata.labels?.[MIGRATION_LABEL] === m.metadata.uid);
  const targetState = target === undefined ? undefined : podState(target);
  const state = {
    sourceNode: vmi.status.nodeName,
    sourcePod: source?.metadata.name,
    targetPod: target?.metadata.name,
    targetNode: target?.spec?.nodeName,
    migrationUid: m.metadata.uid,
    mode: 'PreCopy',
  };
  if (phase === '' || phase === 'Pending') {
    if (target === undefined) {
      const pod = buildLauncherPod(vmi, {
        migrationUid: m.metadata.uid ?? '',
        sourceNode: vmi.status.nodeName ?? '',
        addedNodeSelector: m.spec.addedNodeSelector,
      });
      await ctx.c.pods.create(pod);
    }
    return setPhase('Scheduling');
  }
  if (target === undefined || targetState === 'deleting' || targetState === 'ended') return fail('the target pod is gone');
  if (phase === 'Scheduling') {
    const waitKey = `unschedulable:${m.metadata.uid ?? ''}`;
    if (targetState === 'unschedulable' || targetState === 'pending') {
      if (targetState === 'unschedulable' && ctx.elapsed(waitKey, ctx.unschedulableTimeoutMs, key)) {
        ctx.forget(waitKey);
        return fail('no node can take the target pod');
      }
      return;
    }
    ctx.forget(waitKey);
    return setPhase('Scheduled', { migrationState: state });
  }
  if (phase === 'Scheduled' || phase === 'PreparingTarget') {
    if (targetState === 'running') return setPhase('TargetReady', { migrationState: state });
    return;
  }
  const vmiRef = ref(namespace, vmi.metadata.name ?? '');
  if (phase === 'TargetReady') {
    await ctx.c.kvvmis.mergePatch(vmiRef, { status: { migrationState: { ...state, startTimestamp: now(), completed: false, failed: false } } });
    return setPhase('Running', { migrationState: { ...state, startTimestamp: now() } });
  }
  if (phase === 'Running') {
    const syncKey = `sync:${m.metadata.uid ?? ''}`;
    if (!ctx.elapsed(syncKey, ctx.migrationDelayMs, key)) return;
    ctx.forget(syncKey);
    const started = vmi.status.migrationState?.startTimestamp ?? now();
    const done = { ...state, startTimestamp: started, endTimestamp: now(), completed: true, failed: false };
    await ctx.c.kvvmis.mergePatch(vmiRef, {
      status: {
        nodeName: target.spec?.nodeName,
        migrationState: done,
        // A merge patch merges maps: the source pod's entry is removed explicitly.
        activePods: { ...(source !== undefined ? { [source.metadata.uid ?? '']: null } : {}), [target.metadata.uid ?? '']: target.spec?.nodeName ?? '' },
      },
    });
    if (source !== undefined) await remove(() => ctx.c.pods.delete(ref(namespace, source.metadata.name ?? '')));
    await setPhase('Succeeded', { migrationState: done });
  }
}
