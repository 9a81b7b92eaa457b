import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Finalizer } from '../../../shared/api/finalizers.js';
import type { VirtualMachineOperation } from '../../../shared/api/resources/vmop.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import type { KubeClient } from '../../../shared/kube/index.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { vmop } from './builders.js';
import { eventually, mainKube, pause, testClients } from './fixtures.js';
import { phaseIs, startWorld, type World } from './world.js';

let kube: KubeClient;
let c: Clients;
let w: World;

beforeAll(async () => {
  kube = mainKube();
  c = testClients(kube);
  w = await startWorld(kube, c, 'ctl-vmop');
});
afterAll(async () => {
  await w.stop();
  kube.close();
});

async function opWhen(name: string, check: (op: VirtualMachineOperation) => boolean, what: string): Promise<VirtualMachineOperation> {
  return eventually(async () => {
    const op = await c.vmops.get({ namespace: w.ns, name });
    return check(op) && op;
  }, `${name}: ${what}`);
}
const completedReason = (op: VirtualMachineOperation): string | undefined => op.status?.conditions?.find((x) => x.type === 'Completed')?.reason;
const phase = (p: string) => (op: VirtualMachineOperation) => op.status?.phase === p;

describe('VirtualMachineOperation', () => {
  it('Stop then Start go Pending → InProgress → Completed and drop their finalizer when done', async () => {
    await w.createVM('ops', { runPolicy: 'Manual' });
    await w.vmWhen('ops', phaseIs('Stopped'), 'Stopped');
    await c.vmops.create(vmop(w.scope, 'ops-start', 'ops', 'Start'));
    const started = await opWhen('ops-start', phase('Completed'), 'Completed');
    expect(completedReason(started)).toBe('OperationCompleted');
    expect(started.status?.conditions?.find((x) => x.type === 'SignalSent')?.status).toBe('True');
    await eventually(async () => !(await c.vmops.get({ namespace: w.ns, name: 'ops-start' })).metadata.finalizers?.includes(Finalizer.vmopCleanup), 'finalizer dropped');
    await w.vmWhen('ops', phaseIs('Running'), 'Running');
    await c.vmops.create(vmop(w.scope, 'ops-stop', 'ops', 'Stop', { force: true }));
    await opWhen('ops-stop', phase('Completed'), 'Completed');
    await w.vmWhen('ops', phaseIs('Stopped'), 'Stopped');
    expect(await w.instanceUid('ops')).toBeUndefined();
  });

  it.each([
    ['Start of a running VM fails: not applicable in its phase', 'AlwaysOnUnlessStoppedManually', 'Start', 'NotApplicableForVirtualMachinePhase'],
    ['Stop of an AlwaysOn VM fails: not applicable under its runPolicy', 'AlwaysOn', 'Stop', 'NotApplicableForVirtualMachineRunPolicy'],
    ['Restore fails: not supported by this controller', 'AlwaysOn', 'Restore', 'OperationFailed'],
  ] as const)('%s', async (_what, runPolicy, type, reason) => {
    const name = `na-${type.toLowerCase()}`;
    await w.createVM(name, { runPolicy });
    await w.vmWhen(name, phaseIs('Running'), 'Running');
    const extra = type === 'Restore' ? { restore: { mode: 'Strict' as const, virtualMachineSnapshotName: 'snap' } } : {};
    await c.vmops.create(vmop(w.scope, `${name}-op`, name, type, extra));
    const op = await opWhen(`${name}-op`, phase('Failed'), 'Failed');
    expect(completedReason(op)).toBe(reason);
    expect((await c.vms.get({ namespace: w.ns, name })).status?.phase).toBe('Running');
  });

  it('fails an operation on a VM that does not exist', async () => {
    await c.vmops.create(vmop(w.scope, 'ghost-op', 'no-such-vm', 'Start'));
    const op = await opWhen('ghost-op', phase('Failed'), 'Failed');
    expect(completedReason(op)).toBe('VirtualMachineNotFound');
  });

  it('runs one operation per VM at a time: a restart waits for a running migration, then completes', async () => {
    await w.createVM('busy', { runPolicy: 'AlwaysOn' });
    await w.vmWhen('busy', phaseIs('Running'), 'Running');
    await c.vmops.create(vmop(w.scope, 'busy-migrate', 'busy', 'Migrate', { migrate: { nodeSelector: { zone: 'b' } } }));
    await opWhen('busy-migrate', phase('InProgress'), 'InProgress');
    const vmim = await eventually(() => c.migrations.get({ namespace: w.ns, name: 'vmop-busy-migrate' }), 'migration created');
    expect(vmim.spec).toEqual({ vmiName: 'busy', addedNodeSelector: { zone: 'b' } });
    expect(vmim.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'VirtualMachineOperation', name: 'busy-migrate' });

    const oldUid = await w.instanceUid('busy');
    await c.vmops.create(vmop(w.scope, 'busy-restart', 'busy', 'Restart'));
    const waiting = await opWhen('busy-restart', (op) => completedReason(op) === 'NotReadyToBeExecuted' && op.status?.conditions?.[0]?.message.includes('busy-migrate') === true, 'waiting');
    expect(waiting.status?.phase).toBe('Pending');
    await pause(300);
    expect(await w.instanceUid('busy')).toBe(oldUid);

    await w.kubevirt.completeMigration('vmop-busy-migrate', 'busy', 'node-2');
    const migrated = await opWhen('busy-migrate', phase('Completed'), 'Completed');
    expect(migrated.status?.progress).toBe('100%');
    await opWhen('busy-restart', phase('Completed'), 'Completed');
    expect(await w.instanceUid('busy')).not.toBe(oldUid);
  });

  it('reports a failed migration as a failed Evict', async () => {
    await w.createVM('evictee', { runPolicy: 'AlwaysOn' });
    await w.vmWhen('evictee', phaseIs('Running'), 'Running');
    await c.vmops.create(vmop(w.scope, 'evict', 'evictee', 'Evict'));
    await eventually(() => c.migrations.get({ namespace: w.ns, name: 'vmop-evict' }), 'migration created');
    await c.migrations.patchStatus({ namespace: w.ns, name: 'vmop-evict' }, { phase: 'Running' });
    await opWhen('evict', (op) => completedReason(op) === 'Syncing', 'Syncing');
    await c.migrations.patchStatus({ namespace: w.ns, name: 'vmop-evict' }, { phase: 'Failed' });
    const op = await opWhen('evict', phase('Failed'), 'Failed');
    expect(completedReason(op)).toBe('OperationFailed');
  });

  it('cancels the migration of an operation deleted while in progress', async () => {
    await w.createVM('cancelled', { runPolicy: 'AlwaysOn' });
    await w.vmWhen('cancelled', phaseIs('Running'), 'Running');
    await c.vmops.create(vmop(w.scope, 'cancel-me', 'cancelled', 'Migrate'));
    await eventually(() => c.migrations.get({ namespace: w.ns, name: 'vmop-cancel-me' }), 'migration created');
    await c.vmops.delete({ namespace: w.ns, name: 'cancel-me' });
    await eventually(async () => {
      try {
        await c.migrations.get({ namespace: w.ns, name: 'vmop-cancel-me' });
        return false;
      } catch (err: unknown) {
        return err instanceof NotFoundError;
      }
    }, 'migration deleted');
    await eventually(async () => {
      try {
        await c.vmops.get({ namespace: w.ns, name: 'cancel-me' });
        return false;
      } catch (err: unknown) {
        return err instanceof NotFoundError;
      }
    }, 'operation gone');
  });
});
