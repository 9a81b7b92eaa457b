/**
 * A newer Stop or Restart takes the place of an older unfinished operation of the same VM, as the
 * original does: the older one is Superseded (Completed reason Superseded) and what it asked for is
 * withdrawn (a pending migration deleted); an operation that already finished is never touched.
 */
import { describe, expect, it } from '@jest/globals';
import type { VirtualMachineOperation } from '../../../shared/api/resources/vmop.js';
import { vmop } from './builders.js';
import { eventually, gone } from './fixtures.js';
import { phaseIs, useWorld } from './world.js';

const t = useWorld('ctl-supersede');

const opWhen = (name: string, check: (op: VirtualMachineOperation) => boolean, what: string): Promise<VirtualMachineOperation> =>
  eventually(async () => {
    const op = await t.c.vmops.get({ namespace: t.w.ns, name });
    return check(op) && op;
  }, `${name}: ${what}`);
const completed = (op: VirtualMachineOperation) => op.status?.conditions?.find((x) => x.type === 'Completed');
const phase = (p: string) => (op: VirtualMachineOperation) => op.status?.phase === p;

describe('superseding operations', () => {
  it.each(['Stop', 'Restart'] as const)('a %s supersedes a stuck Migrate: Superseded, its migration cancelled, and the newer operation runs', async (type) => {
    const vm = `stuck-${type.toLowerCase()}`;
    await t.w.createVM(vm, { runPolicy: 'AlwaysOnUnlessStoppedManually' });
    await t.w.vmWhen(vm, phaseIs('Running'), 'Running');
    const oldUid = await t.w.instanceUid(vm);
    await t.c.vmops.create(vmop(t.w.scope, `${vm}-migrate`, vm, 'Migrate'));
    await opWhen(`${vm}-migrate`, phase('InProgress'), 'InProgress');
    await eventually(() => t.c.migrations.get({ namespace: t.w.ns, name: `vmop-${vm}-migrate` }), 'migration created');

    await t.c.vmops.create(vmop(t.w.scope, `${vm}-${type.toLowerCase()}`, vm, type));
    const old = await opWhen(`${vm}-migrate`, phase('Superseded'), 'Superseded');
    expect(completed(old)).toMatchObject({ status: 'False', reason: 'Superseded', message: `Superseded by ${vm}-${type.toLowerCase()} with type ${type}` });
    await eventually(() => gone(() => t.c.migrations.get({ namespace: t.w.ns, name: `vmop-${vm}-migrate` })), 'migration cancelled');
    await opWhen(`${vm}-${type.toLowerCase()}`, phase('Completed'), 'the newer operation Completed');
    if (type === 'Stop') expect(await t.w.instanceUid(vm)).toBeUndefined();
    else expect(await t.w.instanceUid(vm)).not.toBe(oldUid);
    // Superseded is final: the older operation lets go of its finalizer and stays Superseded.
    const after = await opWhen(`${vm}-migrate`, (op) => (op.metadata.finalizers ?? []).length === 0, 'finalizer dropped');
    expect(after.status?.phase).toBe('Superseded');
  });

  it('superseding an operation that already completed: nothing happens to it', async () => {
    await t.w.createVM('done', { runPolicy: 'AlwaysOnUnlessStoppedManually' });
    await t.w.vmWhen('done', phaseIs('Running'), 'Running');
    await t.c.vmops.create(vmop(t.w.scope, 'done-migrate', 'done', 'Migrate'));
    await eventually(() => t.c.migrations.get({ namespace: t.w.ns, name: 'vmop-done-migrate' }), 'migration created');
    await t.w.kubevirt.completeMigration('vmop-done-migrate', 'done', 'node-2');
    const before = await opWhen('done-migrate', (op) => op.status?.phase === 'Completed' && (op.metadata.finalizers ?? []).length === 0, 'Completed');

    await t.c.vmops.create(vmop(t.w.scope, 'done-stop', 'done', 'Stop'));
    await opWhen('done-stop', phase('Completed'), 'Completed');
    const after = await t.c.vmops.get({ namespace: t.w.ns, name: 'done-migrate' });
    expect(after.status).toEqual(before.status);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });
});
