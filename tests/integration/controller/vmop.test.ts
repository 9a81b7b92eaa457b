import { describe, expect, it } from '@jest/globals';
import { Finalizer } from '../../../shared/api/finalizers.js';
import type { VirtualMachineOperation } from '../../../shared/api/resources/vmop.js';
import { statusPatches } from './audit.js';
import { vmop } from './builders.js';
import { eventually, gone } from './fixtures.js';
import { phaseIs, useWorld } from './world.js';

const t = useWorld('ctl-vmop');

async function opWhen(name: string, check: (op: VirtualMachineOperation) => boolean, what: string): Promise<VirtualMachineOperation> {
  return eventually(async () => {
    const op = await t.c.vmops.get({ namespace: t.w.ns, name });
    return check(op) && op;
  }, `${name}: ${what}`);
}
const completedReason = (op: VirtualMachineOperation): string | undefined => op.status?.conditions?.find((x) => x.type === 'Completed')?.reason;
const phase = (p: string) => (op: VirtualMachineOperation) => op.status?.phase === p;

describe('VirtualMachineOperation', () => {
  it('Stop then Start go Pending → InProgress → Completed and drop their finalizer when done', async () => {
    await t.w.createVM('ops', { runPolicy: 'Manual' });
    await t.w.vmWhen('ops', phaseIs('Stopped'), 'Stopped');
    await t.c.vmops.create(vmop(t.w.scope, 'ops-start', 'ops', 'Start'));
    const started = await opWhen('ops-start', phase('Completed'), 'Completed');
    expect(completedReason(started)).toBe('OperationCompleted');
    expect(started.status?.conditions?.find((x) => x.type === 'SignalSent')?.status).toBe('True');
    await eventually(
      async () => !(await t.c.vmops.get({ namespace: t.w.ns, name: 'ops-start' })).metadata.finalizers?.includes(Finalizer.vmopCleanup),
      'finalizer dropped',
    );
    await t.w.vmWhen('ops', phaseIs('Running'), 'Running');
    await t.c.vmops.create(vmop(t.w.scope, 'ops-stop', 'ops', 'Stop', { force: true }));
    await opWhen('ops-stop', phase('Completed'), 'Completed');
    await t.w.vmWhen('ops', phaseIs('Stopped'), 'Stopped');
    expect(await t.w.instanceUid('ops')).toBeUndefined();
  });

  it.each([
    ['Start of a running VM fails: not applicable in its phase', 'AlwaysOnUnlessStoppedManually', 'Start', 'NotApplicableForVirtualMachinePhase'],
    ['Stop of an AlwaysOn VM fails: not applicable under its runPolicy', 'AlwaysOn', 'Stop', 'NotApplicableForVirtualMachineRunPolicy'],
    ['Restore of a running VM fails: not applicable in its phase', 'AlwaysOn', 'Restore', 'NotApplicableForVirtualMachinePhase'],
  ] as const)('%s', async (_what, runPolicy, type, reason) => {
    const name = `na-${type.toLowerCase()}`;
    await t.w.createVM(name, { runPolicy });
    await t.w.vmWhen(name, phaseIs('Running'), 'Running');
    const extra = type === 'Restore' ? { restore: { mode: 'Strict' as const, virtualMachineSnapshotName: 'snap' } } : {};
    await t.c.vmops.create(vmop(t.w.scope, `${name}-op`, name, type, extra));
    const op = await opWhen(`${name}-op`, phase('Failed'), 'Failed');
    expect(completedReason(op)).toBe(reason);
    expect((await t.c.vms.get({ namespace: t.w.ns, name })).status?.phase).toBe('Running');
  });

  it('fails an operation on a VM that does not exist', async () => {
    await t.c.vmops.create(vmop(t.w.scope, 'ghost-op', 'no-such-vm', 'Start'));
    const op = await opWhen('ghost-op', phase('Failed'), 'Failed');
    expect(completedReason(op)).toBe('VirtualMachineNotFound');
  });

  it('runs one operation per VM at a time: an Evict that may not supersede a running migration waits, then runs', async () => {
    await t.w.createVM('busy', { runPolicy: 'AlwaysOn' });
    await t.w.vmWhen('busy', phaseIs('Running'), 'Running');
    await t.c.vmops.create(vmop(t.w.scope, 'busy-migrate', 'busy', 'Migrate', { migrate: { nodeSelector: { zone: 'b' } } }));
    await opWhen('busy-migrate', phase('InProgress'), 'InProgress');
    const vmim = await eventually(() => t.c.migrations.get({ namespace: t.w.ns, name: 'vmop-busy-migrate' }), 'migration created');
    expect(vmim.spec).toEqual({ vmiName: 'busy', addedNodeSelector: { zone: 'b' } });
    expect(vmim.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'VirtualMachineOperation', name: 'busy-migrate' });

    await t.c.vmops.create(vmop(t.w.scope, 'busy-evict', 'busy', 'Evict'));
    const waiting = await opWhen(
      'busy-evict',
      (op) => completedReason(op) === 'NotReadyToBeExecuted' && op.status?.conditions?.[0]?.message.includes('busy-migrate') === true,
      'waiting',
    );
    expect(waiting.status?.phase).toBe('Pending');
    // Waiting means not asked for: no second migration while the first runs.
    await expect(t.c.migrations.get({ namespace: t.w.ns, name: 'vmop-busy-evict' })).rejects.toThrow();

    await t.w.kubevirt.completeMigration('vmop-busy-migrate', 'busy', 'node-2');
    const migrated = await opWhen('busy-migrate', phase('Completed'), 'Completed');
    expect(migrated.status?.progress).toBe('100%');
    await opWhen('busy-evict', phase('InProgress'), 'InProgress');
    await eventually(() => t.c.migrations.get({ namespace: t.w.ns, name: 'vmop-busy-evict' }), 'its migration created');
  });

  it('reports a failed migration as a failed Evict', async () => {
    await t.w.createVM('evictee', { runPolicy: 'AlwaysOn' });
    await t.w.vmWhen('evictee', phaseIs('Running'), 'Running');
    await t.c.vmops.create(vmop(t.w.scope, 'evict', 'evictee', 'Evict'));
    await eventually(() => t.c.migrations.get({ namespace: t.w.ns, name: 'vmop-evict' }), 'migration created');
    await t.c.migrations.patchStatus({ namespace: t.w.ns, name: 'vmop-evict' }, { phase: 'Running' });
    await opWhen('evict', (op) => completedReason(op) === 'Syncing', 'Syncing');
    await t.c.migrations.patchStatus({ namespace: t.w.ns, name: 'vmop-evict' }, { phase: 'Failed' });
    const op = await opWhen('evict', phase('Failed'), 'Failed');
    expect(completedReason(op)).toBe('OperationFailed');
  });

  it('fails a Migrate whose migration is deleted before it finished, naming it (as the original fails it)', async () => {
    await t.w.createVM('vanish', { runPolicy: 'AlwaysOn' });
    await t.w.vmWhen('vanish', phaseIs('Running'), 'Running');
    await t.c.vmops.create(vmop(t.w.scope, 'vanish-migrate', 'vanish', 'Migrate', { migrate: { nodeSelector: { zone: 'nowhere' } } }));
    await opWhen('vanish-migrate', phase('InProgress'), 'InProgress');
    await eventually(() => t.c.migrations.get({ namespace: t.w.ns, name: 'vmop-vanish-migrate' }), 'migration created');
    await t.c.migrations.delete({ namespace: t.w.ns, name: 'vmop-vanish-migrate' });
    const op = await opWhen('vanish-migrate', phase('Failed'), 'Failed');
    const completed = op.status?.conditions?.find((x) => x.type === 'Completed');
    expect(completed).toMatchObject({
      status: 'False',
      reason: 'OperationFailed',
      message: 'the migration vmop-vanish-migrate was deleted before it finished',
    });
  });

  it('cancels the migration of an operation deleted while in progress, Terminating meanwhile', async () => {
    await t.w.createVM('cancelled', { runPolicy: 'AlwaysOn' });
    await t.w.vmWhen('cancelled', phaseIs('Running'), 'Running');
    await t.c.vmops.create(vmop(t.w.scope, 'cancel-me', 'cancelled', 'Migrate'));
    await eventually(() => t.c.migrations.get({ namespace: t.w.ns, name: 'vmop-cancel-me' }), 'migration created');
    await t.c.vmops.delete({ namespace: t.w.ns, name: 'cancel-me' });
    await eventually(() => gone(() => t.c.migrations.get({ namespace: t.w.ns, name: 'vmop-cancel-me' })), 'migration deleted');
    await eventually(() => gone(() => t.c.vmops.get({ namespace: t.w.ns, name: 'cancel-me' })), 'operation gone');
    const phases = (await statusPatches('virtualmachineoperations', t.w.ns, 'cancel-me')).map((e) => e.requestObject?.status?.['phase']);
    expect(phases).toContain('Terminating');
  });
});
