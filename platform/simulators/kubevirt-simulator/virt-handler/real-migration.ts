/**
 * virt-handler's part of a live migration when the guests are QEMU processes (`qemu/`): the same
 * protocol on the instance as the simulated hand-off (`migration.ts`), with a real migration behind it.
 * The target's handler, once its pod runs, starts a QEMU process from the instance's spec that waits
 * for the state (`-incoming`) and gives its address and port (`targetNodeAddress`,
 * `targetDirectMigrationNodePorts`); the source's handler sends the guest there (QMP `migrate`,
 * `startTimestamp`, mode) and watches `query-migrate`: completed → the target process is the guest
 * from now on, the source process ends, the instance is on the target node (`completed`, timestamps,
 * the source pod deleted, as in `migration.ts`); failed (the target died, the connection broke) → the
 * guest goes on running on the source, the target process is discarded and the instance says
 * `failed` with QEMU's reason (`failureReason`), which virt-controller turns into a failed migration.
 */
import { MIGRATION_TARGET_NODE_LABEL, NODE_NAME_LABEL } from '../../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { errorMessage } from '../../../../shared/errors/index.js';
import { now, ref, remove, type StepContext } from '../context.js';
import type { LauncherPod } from '../kube.js';
import { podState } from '../launcher.js';
import type { GuestBackend } from '../qemu/backend.js';
import { cancelMigration, migrationProgress, resumeSource, sendMigration, type MigrationProgress } from '../qemu/live-migration.js';
import { diskFiles } from './real-guest.js';
import { writeInstance, type InstanceChange } from './write.js';

type VMI = InternalVirtualMachineInstance;
type State = NonNullable<NonNullable<VMI['status']>['migrationState']>;

/** Where a target listens: every simulated node is this machine. */
const TARGET_HOST = '127.0.0.1';
/** How often a running migration is looked at. */
export const MIGRATION_POLL_MS = 500;
/** The instance annotation with the last real migration's figures (time, downtime, bytes). */
export const MIGRATION_ANNOTATION = 'kubevirt-simulator.local/last-migration';

const keyOf = (vmi: VMI): string => `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;

/** What every part of one migration step has at hand. */
interface Step {
  readonly ctx: StepContext;
  readonly guests: GuestBackend;
  readonly vmi: VMI;
  readonly state: State;
  readonly patch: (status: Record<string, unknown>, metadata?: Omit<InstanceChange, 'status'>) => Promise<VMI>;
  /** The migration failed: the instance says so with the reason (the guest goes on on the source). */
  readonly fail: (reason: string) => Promise<void>;
}

/** One step of the instance's migration with real guests. */
export async function handleRealMigration(ctx: StepContext, guests: GuestBackend, vmi: VMI, pods: readonly LauncherPod[]): Promise<void> {
  const state = vmi.status?.migrationState;
  await dropStaleTargets(ctx, guests, vmi, state);
  if (vmi.status?.phase !== 'Running' || !state?.targetNode || !state.migrationUid || state.completed === true || state.failed === true) return;
  // As every node-agent write (write.ts): a JSON Patch on the version read, the migration state in Go's
  // shape. A merge patch once stored `failed: false`, which Go omits, so every later patch of
  // virt-controller's that tests the migration state was refused (422) and the next migration stalled.
  const patch = (status: Record<string, unknown>, metadata: Omit<InstanceChange, 'status'> = {}): Promise<VMI> =>
    writeInstance(ctx, vmi, { status, ...metadata });
  const fail = async (reason: string): Promise<void> => {
    ctx.log.warn({ vm: keyOf(vmi), migration: state.migrationUid, reason }, 'live migration failed; the guest goes on running on the source');
    await patch(
      { migrationState: { ...state, completed: true, failed: true, endTimestamp: now(), failureReason: reason } },
      { labels: { [MIGRATION_TARGET_NODE_LABEL]: null } },
    );
  };
  const step: Step = { ctx, guests, vmi, state, patch, fail };
  if (!state.targetNodeAddress) return prepareTarget(step, pods);
  if (!state.startTimestamp) return startSending(step);
  return watchSending(step);
}

/** The target's part: a QEMU process waiting for the state, its address and port on the instance. */
async function prepareTarget({ ctx, guests, vmi, state, patch, fail }: Step, pods: readonly LauncherPod[]): Promise<void> {
  const target = pods.find((p) => p.metadata.name === state.targetPod);
  if (target === undefined || podState(target) !== 'running') return;
  let port: number;
  try {
    ({ port } = await guests.prepareTarget(vmi, state.migrationUid ?? '', await diskFiles(ctx, vmi), TARGET_HOST));
  } catch (err: unknown) {
    return fail(`the target could not be prepared: ${errorMessage(err)}`);
  }
  ctx.log.info({ vm: keyOf(vmi), node: state.targetNode, port }, 'migration target prepared: a QEMU process waits for the guest');
  await patch({
    migrationState: { ...state, targetNodeAddress: TARGET_HOST, targetDirectMigrationNodePorts: { [String(port)]: 0 }, targetNodeDomainDetected: false },
  });
}

/** The source's part: send the guest to the target's address and port. */
async function startSending({ ctx, guests, vmi, state, patch, fail }: Step): Promise<void> {
  const source = guests.get(vmi.metadata.uid ?? '');
  if (source === undefined || !source.running) return fail('the source guest is not running on this machine');
  const port = migrationPort(state);
  if (port === undefined)
    return fail(`the target gave no migration port (targetDirectMigrationNodePorts: ${JSON.stringify(state.targetDirectMigrationNodePorts)})`);
  try {
    // A step repeated after a failed write finds the migration already sent.
    if ((await migrationProgress(source)).state !== 'active')
      await sendMigration(source, state.targetNodeAddress ?? TARGET_HOST, port, guests.migrationBandwidth);
  } catch (err: unknown) {
    await guests.dropTarget(state.migrationUid ?? '');
    return fail(`the source could not start the migration: ${errorMessage(err)}`);
  }
  ctx.log.info({ vm: keyOf(vmi), from: state.sourceNode, to: state.targetNode, port }, 'live migration started (QEMU)');
  await patch({ migrationState: { ...state, startTimestamp: now(), mode: 'PreCopy' } });
}

/** The source's part while it sends: query-migrate every MIGRATION_POLL_MS until it completed or failed. */
async function watchSending(step: Step): Promise<void> {
  const { ctx, guests, vmi, state, patch, fail } = step;
  const migrationUid = state.migrationUid ?? '';
  const pollKey = `migrate:${migrationUid}`;
  if (!ctx.elapsed(pollKey, MIGRATION_POLL_MS, keyOf(vmi))) return;
  ctx.forget(pollKey);
  const source = guests.get(vmi.metadata.uid ?? '');
  const progress = guests.outcome(migrationUid) ?? (source?.running === true ? await migrationProgress(source) : undefined);
  if (progress === undefined) return fail('the source guest ended during the migration');
  if (progress.state === 'none') return fail('the source guest has no migration running (it was restarted)');
  if (progress.state === 'active') {
    ctx.elapsed(pollKey, MIGRATION_POLL_MS, keyOf(vmi)); // the next look
    if (progress.mode !== state.mode) await patch({ migrationState: { ...state, mode: progress.mode } });
    return;
  }
  if (progress.state === 'failed') {
    if (source?.running === true) {
      const after = await resumeSource(source);
      ctx.log.info({ vm: keyOf(vmi), status: after }, 'the source guest runs on after the failed migration');
    }
    await guests.dropTarget(migrationUid, progress);
    return fail(progress.reason);
  }
  await complete(step, progress);
}

/** The port of the migration stream (KubeVirt: the key whose value is 0). */
function migrationPort(state: State): number | undefined {
  const ports = state.targetDirectMigrationNodePorts ?? {};
  const key = Object.keys(ports).find((k) => ports[k] === 0);
  const port = Number(key);
  return key !== undefined && Number.isInteger(port) && port > 0 ? port : undefined;
}

/** The migration completed: the target process is the guest, the instance on the target node, the source pod gone. */
async function complete({ ctx, guests, vmi, state, patch }: Step, progress: Extract<MigrationProgress, { state: 'completed' }>): Promise<void> {
  await guests.promote(state.migrationUid ?? '', progress);
  const at = now();
  const figures = `qemu: ${(progress.transferredBytes / 1048576).toFixed(1)} MiB in ${progress.totalMs} ms, downtime ${progress.downtimeMs} ms`;
  ctx.log.info({ vm: keyOf(vmi), node: state.targetNode, ...progress }, 'live migration completed (QEMU); the guest runs on the target');
  await patch(
    {
      nodeName: state.targetNode,
      evacuationNodeName: null,
      migrationState: { ...state, endTimestamp: at, completed: true, targetNodeDomainDetected: true, targetNodeDomainReadyTimestamp: at },
    },
    {
      labels: { [NODE_NAME_LABEL]: state.targetNode ?? null, [MIGRATION_TARGET_NODE_LABEL]: null },
      annotations: { [MIGRATION_ANNOTATION]: figures },
    },
  );
  const source = state.sourcePod;
  if (source) await remove(() => ctx.c.pods.delete(ref(vmi.metadata.namespace ?? '', source)));
}

/**
 * Target processes of migrations that are over without them (cancelled: the migration object deleted,
 * failed elsewhere) or not the instance's current one: discarded, and a source still sending cancelled.
 */
async function dropStaleTargets(ctx: StepContext, guests: GuestBackend, vmi: VMI, state: State | undefined): Promise<void> {
  const current = state?.completed === true || state?.failed === true ? undefined : state?.migrationUid;
  for (const m of guests.targetsOf(vmi.metadata.uid ?? '')) {
    if (m === current) continue;
    const source = guests.get(vmi.metadata.uid ?? '');
    if (source?.running === true && (await migrationProgress(source)).state === 'active') await cancelMigration(source);
    ctx.log.info({ vm: keyOf(vmi), migration: m }, 'the migration is over without its target: the target QEMU process is discarded');
    await guests.dropTarget(m);
  }
}
