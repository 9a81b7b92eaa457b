/**
 * virt-controller's migration controller (not run in node-agent mode): a live migration gets a
 * target pod kept off the source node, placed by the real scheduler, and moves through KubeVirt's
 * phases on what virt-handler (../virt-handler/migration.ts) writes on the instance, as KubeVirt
 * v1.6's controller does: Pending → Scheduling (target pod made) → Scheduled (target pod runs) →
 * PreparingTarget (the instance handed to the target: `migrationState` with source and target) →
 * TargetReady (the target's handler gave its address) → Running (the source's handler started) →
 * Succeeded (it completed) or Failed. A target that cannot be placed fails the migration after a
 * timeout; a deleted migration is cancelled (its target pod removed).
 */
import type { InternalVirtualMachineInstance, InternalVirtualMachineInstanceMigration } from '../../../../shared/api/internal/resources.js';
import { now, ref, remove, type StepContext } from '../context.js';
import type { LauncherPod } from '../kube.js';
import { activePod } from '../../../../shared/api/internal/launcher.js';
import { buildLauncherPod, MIGRATION_LABEL, podState } from '../launcher.js';
import { MIGRATION_TARGET_NODE_LABEL } from '../../../../shared/api/internal/launcher.js';

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
  if (vmi !== undefined && state?.migrationUid && state.completed !== true && state.failed !== true && !liveUids.has(state.migrationUid)) {
    await ctx.c.kvvmis.mergePatch(ref(vmi.metadata.namespace ?? '', vmi.metadata.name ?? ''), {
      status: { migrationState: { ...state, abortStatus: 'Succeeded', failed: true, completed: true, endTimestamp: now() } },
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
  const state = vmi.status.migrationState;
  const mine = state?.migrationUid === m.metadata.uid ? state : undefined;
  if (mine?.failed === true) return fail(`virt-handler reported the migration failed${mine.failureReason ? `: ${mine.failureReason}` : ''}`);
  if (mine?.completed === true) return setPhase('Succeeded', { migrationState: mine });
  const source = activePod(vmi, pods);
  const target = pods.find((p) => p.metadata.labels?.[MIGRATION_LABEL] === m.metadata.uid);
  const targetState = target === undefined ? undefined : podState(target);
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
    if (targetState === 'running') return setPhase('Scheduled');
    return;
  }
  if (phase === 'Scheduled') {
    // The hand-off: the target's virt-handler sees the instance through the label and the state.
    const handoff = {
      migrationUid: m.metadata.uid,
      sourceNode: vmi.status.nodeName,
      sourcePod: source?.metadata.name,
      targetNode: target.spec?.nodeName,
      targetPod: target.metadata.name,
    };
    // A fresh state, as KubeVirt writes it: what an earlier migration of this instance left (its
    // `completed`, timestamps, target address) is removed, or the merge would keep it.
    const stale = Object.fromEntries(Object.keys(state ?? {}).map((k) => [k, null]));
    await ctx.c.kvvmis.mergePatch(ref(namespace, vmi.metadata.name ?? ''), {
      metadata: { labels: { [MIGRATION_TARGET_NODE_LABEL]: target.spec?.nodeName ?? '' }, resourceVersion: vmi.metadata.resourceVersion },
      status: { migrationState: { ...stale, ...handoff } },
    });
    return setPhase('PreparingTarget', { migrationState: handoff });
  }
  if (phase === 'PreparingTarget' && mine?.targetNodeAddress) return setPhase('TargetReady', { migrationState: mine });
  if (phase === 'TargetReady' && mine?.startTimestamp) return setPhase('Running', { migrationState: mine });
}
