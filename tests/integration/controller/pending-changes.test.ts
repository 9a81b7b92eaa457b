import { describe, expect, it } from '@jest/globals';
import { vmop } from './builders.js';
import { eventually } from './fixtures.js';
import { phaseIs, useWorld } from './world.js';

const t = useWorld('ctl-changes');

const cond = (vm: { status?: { conditions?: { type: string; status: string; reason: string }[] } }, type: string): string | undefined => {
  const found = vm.status?.conditions?.find((x) => x.type === type);
  return found === undefined ? undefined : `${found.status}/${found.reason}`;
};
const templateCores = async (name: string): Promise<number | undefined> =>
  (await t.c.kvvms.get({ namespace: t.w.ns, name })).spec.template.spec.domain.cpu?.cores;
const instanceCores = async (name: string): Promise<number | undefined> => (await t.c.kvvmis.get({ namespace: t.w.ns, name })).spec.domain.cpu?.cores;

describe('spec changes of a running VM', () => {
  it('wait for a restart (restartAwaitingChanges) and apply with a Restart operation', async () => {
    await t.w.createVM('resize', { runPolicy: 'AlwaysOn' });
    await t.w.vmWhen('resize', phaseIs('Running'), 'Running');
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'resize' }, { spec: { cpu: { cores: 4 }, memory: { size: '4Gi' } } });
    const waiting = await t.w.vmWhen('resize', (v) => (v.status?.restartAwaitingChanges ?? []).length > 0, 'changes awaiting a restart');
    expect(waiting.status?.restartAwaitingChanges).toEqual([
      { operation: 'replace', path: 'cpu.cores', currentValue: 2, desiredValue: 4 },
      { operation: 'replace', path: 'memory.size', currentValue: '2Gi', desiredValue: '4Gi' },
    ]);
    expect(cond(waiting, 'AwaitingRestartToApplyConfiguration')).toBe('True/ChangesPendingRestart');
    expect(cond(waiting, 'ConfigurationApplied')).toBe('False/ConfigurationNotApplied');
    expect(await templateCores('resize')).toBe(2);

    const old = await t.w.instanceUid('resize');
    await t.c.vmops.create(vmop(t.w.scope, 'resize-restart', 'resize', 'Restart'));
    await eventually(async () => (await t.c.vmops.get({ namespace: t.w.ns, name: 'resize-restart' })).status?.phase === 'Completed', 'restart Completed');
    expect(await t.w.instanceUid('resize')).not.toBe(old);
    expect(await instanceCores('resize')).toBe(4);
    const applied = await t.w.vmWhen('resize', (v) => v.status?.restartAwaitingChanges === undefined, 'changes applied');
    expect(cond(applied, 'ConfigurationApplied')).toBe('True/ConfigurationApplied');
    expect(cond(applied, 'AwaitingRestartToApplyConfiguration')).toBeUndefined();
    expect(applied.status?.resources?.cpu).toMatchObject({ cores: 4, coreFraction: '50%', requestedCores: '2' });
  });

  it('are applied with a restart by the controller itself when restartApprovalMode is Automatic', async () => {
    await t.w.createVM('auto', { runPolicy: 'AlwaysOn', disruptions: { restartApprovalMode: 'Automatic' } });
    await t.w.vmWhen('auto', phaseIs('Running'), 'Running');
    const old = await t.w.instanceUid('auto');
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'auto' }, { spec: { cpu: { cores: 3 } } });
    await eventually(async () => {
      const uid = await t.w.instanceUid('auto');
      return uid !== undefined && uid !== old;
    }, 'restarted');
    expect(await instanceCores('auto')).toBe(3);
    expect(t.w.kubevirt.created.get('auto')).toBe(2);
  });

  it('apply at once to a stopped VM, and a runPolicy change never waits for a restart', async () => {
    await t.w.createVM('idle', { runPolicy: 'Manual' });
    await t.w.vmWhen('idle', phaseIs('Stopped'), 'Stopped');
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'idle' }, { spec: { cpu: { cores: 6 } } });
    await eventually(async () => (await templateCores('idle')) === 6, 'template updated');
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'idle' }, { spec: { runPolicy: 'AlwaysOn' } });
    await t.w.vmWhen('idle', phaseIs('Running'), 'Running');
    const changed = await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'idle' }, { spec: { runPolicy: 'AlwaysOnUnlessStoppedManually' } });
    const vm = await t.w.vmWhen('idle', (v) => (v.status?.observedGeneration ?? 0) >= (changed.metadata.generation ?? 1), 'the runPolicy change observed');
    expect(vm.status?.restartAwaitingChanges).toBeUndefined();
    expect(cond(vm, 'ConfigurationApplied')).toBe('True/ConfigurationApplied');
  });
});
