import { INTERNAL_API_VERSION, type InternalVirtualMachineInstanceMigration } from '../../../../shared/api/internal/resources.js';
import { ownerReferenceTo } from '../../../../shared/kube/index.js';
import { AlreadyExistsError } from '../../../../shared/errors/index.js';
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

/** Migrate and Evict: a KubeVirt migration of the instance, owned by the operation. */
export const migrateOperation: Operation = {
  inProgressReason: 'MigrationPending',
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
  check(c): Progress {
    const vmim = migrationOf(c);
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
