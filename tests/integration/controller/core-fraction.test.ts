/**
 * A change of `spec.cpu.coreFraction` on a running VM, as the original treats it: its CPU comparator
 * marks a fraction change as needing a restart (only the VPA-driven `Auto` fraction moves in place,
 * which needs a VPA this module does not run). The change waits in `restartAwaitingChanges` with
 * `AwaitingRestartToApplyConfiguration`, the running instance keeps its CPU request, and a restart
 * applies it; a stopped VM gets it at once. Malformed fractions are refused by the apiserver.
 */
import { describe, expect, it } from '@jest/globals';
import { vmop } from './builders.js';
import { eventually } from './fixtures.js';
import { phaseIs, useWorld } from './world.js';

const t = useWorld('ctl-fraction');

const cond = (vm: { status?: { conditions?: { type: string; status: string; reason: string }[] } }, type: string): string | undefined => {
  const found = vm.status?.conditions?.find((x) => x.type === type);
  return found === undefined ? undefined : `${found.status}/${found.reason}`;
};
const templateRequest = async (name: string): Promise<unknown> =>
  (await t.c.kvvms.get({ namespace: t.w.ns, name })).spec.template.spec.domain.resources?.requests?.['cpu'];
const instanceRequest = async (name: string): Promise<unknown> => (await t.c.kvvmis.get({ namespace: t.w.ns, name })).spec.domain.resources?.requests?.['cpu'];

describe('core fraction of a VM', () => {
  it('a fraction change on a running VM waits for a restart, as the original, and the restart applies it', async () => {
    await t.w.createVM('frac', { runPolicy: 'AlwaysOn', cpu: { cores: 2, coreFraction: '50%' } });
    await t.w.vmWhen('frac', phaseIs('Running'), 'Running');
    expect(await instanceRequest('frac')).toBe('1');

    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'frac' }, { spec: { cpu: { coreFraction: '25%' } } });
    const waiting = await t.w.vmWhen('frac', (v) => (v.status?.restartAwaitingChanges ?? []).length > 0, 'the fraction change awaiting a restart');
    expect(waiting.status?.restartAwaitingChanges).toEqual([{ operation: 'replace', path: 'cpu.coreFraction', currentValue: '50%', desiredValue: '25%' }]);
    expect(cond(waiting, 'AwaitingRestartToApplyConfiguration')).toBe('True/ChangesPendingRestart');
    expect(cond(waiting, 'ConfigurationApplied')).toBe('False/ConfigurationNotApplied');
    expect(await templateRequest('frac')).toBe('1');
    expect(await instanceRequest('frac')).toBe('1');

    await t.c.vmops.create(vmop(t.w.scope, 'frac-restart', 'frac', 'Restart'));
    await eventually(async () => (await t.c.vmops.get({ namespace: t.w.ns, name: 'frac-restart' })).status?.phase === 'Completed', 'restart Completed');
    const applied = await t.w.vmWhen('frac', (v) => v.status?.restartAwaitingChanges === undefined && phaseIs('Running')(v), 'the fraction applied');
    expect(cond(applied, 'ConfigurationApplied')).toBe('True/ConfigurationApplied');
    expect(await instanceRequest('frac')).toBe('500m');
    expect(applied.status?.resources?.cpu).toMatchObject({ cores: 2, coreFraction: '25%' });
  });

  it('cores and fraction changed together are listed as one cpu change, as the original lists them', async () => {
    await t.w.createVM('both', { runPolicy: 'AlwaysOn', cpu: { cores: 2, coreFraction: '50%' } });
    await t.w.vmWhen('both', phaseIs('Running'), 'Running');
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'both' }, { spec: { cpu: { cores: 4, coreFraction: '25%' } } });
    const waiting = await t.w.vmWhen('both', (v) => (v.status?.restartAwaitingChanges ?? []).length > 0, 'the cpu change awaiting a restart');
    expect(waiting.status?.restartAwaitingChanges).toEqual([
      { operation: 'replace', path: 'cpu', currentValue: { cores: 2, coreFraction: '50%' }, desiredValue: { cores: 4, coreFraction: '25%' } },
    ]);
  });

  it('a stopped VM takes a new fraction at once', async () => {
    await t.w.createVM('cold', { runPolicy: 'Manual', cpu: { cores: 2, coreFraction: '50%' } });
    await t.w.vmWhen('cold', phaseIs('Stopped'), 'Stopped');
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'cold' }, { spec: { cpu: { coreFraction: '10%' } } });
    await eventually(async () => (await templateRequest('cold')) === '200m', 'the template request at 10%');
    const vm = await t.c.vms.get({ namespace: t.w.ns, name: 'cold' });
    expect(vm.status?.restartAwaitingChanges).toBeUndefined();
  });

  it.each(['0%', '101%', '50', 'half', '5.5%'])(
    'refuses the fraction %s at the apiserver, naming spec.cpu.coreFraction, and the VM keeps running',
    async (bad) => {
      await expect(t.c.vms.mergePatch({ namespace: t.w.ns, name: 'frac' }, { spec: { cpu: { coreFraction: bad } } })).rejects.toThrow(
        /spec\.cpu\.coreFraction/,
      );
      const vm = await t.c.vms.get({ namespace: t.w.ns, name: 'frac' });
      expect(vm.spec.cpu.coreFraction).toBe('25%');
      expect(vm.status?.phase).toBe('Running');
    },
  );
});
