import { INTERNAL_API_VERSION, type InternalVirtualMachineInstanceMigration } from '../../../../shared/api/internal/resources.js';
import { ownerReferenceTo } from '../../../../shared/kube/index.js';
import { AlreadyExistsError, NotFoundError } from '../../../../shared/errors/index.js';
import { ignoreMissing } from '../vm/handlers/deletion.js';
import type { OpContext, Operation, Progress } from './operation.js';

/** The migration object of an operation: `vmop-<operation name>`. */
export function migrationNameOf(vmopName: string): string {
  return `vmop-${vmopName}`;
}

/** KubeVirt migration phase → Completed reason and progress, as the original reports them. */
const PROGRESS: Record<string, { reason: string; progress: string }> = {
  '': { reason: 'MigrationPending', progress: '0%' },
  Pending: { reason: 'MigrationPending', progress: '0%' },
  Scheduling: { reason: 'TargetScheduling', progress: '2%' },
  Scheduled: { reason: 'TargetPreparing', progress: '3%' },
  PreparingTarget: { reason: 'TargetPreparing', progress: '3%' },
  TargetReady: { reason: 'MigrationTargetReady', progress: '10%' },
  Running: { reason: 'Syncing', progress: '10%' },
};

function migrationOf(c: Pick<OpContext, 'deps' | 'vmop'>): InternalVirtualMachineInstanceMigration | undefined {
  return c.deps.caches.migrations.get(`${c.vmop.metadata.namespace ?? ''}/${migrationNameOf(c.vmop.metadata.name ?? '')}`);
}

/** Why a migration failed, as far as KubeVirt says: virt-handler's `failureReason`, else the Failed condition's message. */
export function failedMessage(vmim: InternalVirtualMachineInstanceMigration | undefined): string {
  const why = vmim?.status?.migrationState?.failureReason || vmim?.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True')?.message;
  return why ? `the live migration failed: ${why}` : 'the live migration failed';
}

/**
 * A migration the operation made is gone before it finished (deleted by someone, or by KubeVirt with
 * its instance). Why, as far as the instance says, as the original reports it: no instance means the
 * VM stopped; a migration the instance records as failed after the operation began names its reason.
 */
export function vanishedMessage(c: Pick<OpContext, 'kvvmi' | 'vmop'>): string {
  if (c.kvvmi === undefined) return 'Migration failed because the virtual machine is currently not running.';
  const state = c.kvvmi.status?.migrationState;
  const began = Date.parse(c.vmop.status?.conditions?.find((x) => x.type === 'SignalSent')?.lastTransitionTime ?? c.vmop.metadata.creationTimestamp ?? '');
  const ended = Date.parse(state?.endTimestamp ?? '');
  if (state?.failed === true && ended >= began) return `Migration failed: ${state.failureReason ?? 'no reason given'}`;
  return `the migration ${migrationNameOf(c.vmop.metadata.name ?? '')} was deleted before it finished`;
}

/** The operation's migration: the cache's, else the apiserver's (a cache that has not seen the create yet). */
async function currentMigration(c: OpContext): Promise<InternalVirtualMachineInstanceMigration | undefined> {
  const cached = migrationOf(c);
  if (cached !== undefined) return cached;
  try {
    return c.deps.caches.migrations.remember(
      await c.deps.clients.migrations.get({ namespace: c.vmop.metadata.namespace, name: migrationNameOf(c.vmop.metadata.name ?? '') }, { signal: c.signal }),
    );
  } catch (err: unknown) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/** Migrate and Evict: a KubeVirt migration of the instance, owned by the operation. */
export const migrateOperation: Operation = {
  inProgressReason: 'MigrationPending',
  cleansOwnObjectsOnly: true,
  async signal(c) {
    if (c.kvvmi === undefined) return 'the virtual machine has no instance to migrate';
    if (migrationOf(c) !== undefined) return undefined;
    const nodeSelector = c.vmop.spec.migrate?.nodeSelector;
    const vmim: InternalVirtualMachineInstanceMigration = {
      apiVersion: INTERNAL_API_VERSION,
      kind: 'InternalVirtualizationVirtualMachineInstanceMigration',
      metadata: {
        name: migrationNameOf(c.vmop.metadata.name ?? ''),
        namespace: c.vmop.metadata.namespace,
        ownerReferences: [{ ...ownerReferenceTo(c.vmop, { controller: true, blockOwnerDeletion: true }) }],
      },
      spec: { vmiName: c.vm.metadata.name ?? '', ...(nodeSelector !== undefined ? { addedNodeSelector: nodeSelector } : {}) },
    };
    try {
      c.deps.caches.migrations.remember(await c.deps.clients.migrations.create(vmim, { signal: c.signal }));
    } catch (err: unknown) {
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
    return undefined;
  },
  async check(c): Promise<Progress> {
    const vmim = await currentMigration(c);
    if (vmim === undefined) return { state: 'failed', message: vanishedMessage(c) };
    const phase = vmim?.status?.phase ?? '';
    if (phase === 'Succeeded') return { state: 'done' };
    if (phase === 'Failed') return { state: 'failed', message: failedMessage(vmim) };
    const step = PROGRESS[phase] ?? { reason: 'Syncing', progress: '10%' };
    return { state: 'waiting', reason: step.reason, progress: step.progress };
  },
  async cleanup(c) {
    const vmim = migrationOf(c);
    const phase = vmim?.status?.phase;
    // An unfinished migration of a deleted operation is cancelled by deleting it.
    if (vmim === undefined || phase === 'Succeeded' || phase === 'Failed') return true;
    if (vmim.metadata.deletionTimestamp === undefined) {
      await ignoreMissing(c.deps.clients.migrations.delete({ namespace: vmim.metadata.namespace, name: vmim.metadata.name ?? '' }, { signal: c.signal }));
    }
    // Gone once its delete event arrives (the migration's events bring the operation back).
    return false;
  },
};
