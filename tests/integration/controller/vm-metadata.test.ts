/**
 * The VM's labels and annotations on the internal VM, its template and the running instance, as the
 * original's SyncMetadata handler propagates them: applied while the VM runs (no restart awaited),
 * taken off again when removed from the VM, keys others set left alone. (The launcher-pod part is in
 * vm-status.test.ts.) KubeVirt is the simulator.
 */
import { describe, expect, it } from '@jest/globals';
import { LAST_APPLIED_SPEC } from '../../../daemons/controller/reconcilers/vm/kvvm/build.js';
import { eventually } from './fixtures.js';
import { phaseIs, useWorld } from './world.js';

const t = useWorld('ctl-vmmeta');

interface Meta {
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
}
/** The internal VM's, its template's and the instance's metadata. */
async function where(name: string): Promise<{ kvvm: Meta; template: Meta; vmi: Meta }> {
  const ref = { namespace: t.w.ns, name };
  const kvvm = await t.c.kvvms.get(ref);
  const vmi = await t.c.kvvmis.get(ref);
  return { kvvm: kvvm.metadata, template: kvvm.spec.template.metadata ?? {}, vmi: vmi.metadata };
}
const everywhere = (m: { kvvm: Meta; template: Meta; vmi: Meta }, check: (x: Meta) => boolean): boolean => check(m.kvvm) && check(m.template) && check(m.vmi);

describe('VM labels and annotations on the internal VM and the instance', () => {
  it('a running VM’s labels and annotations reach the internal VM, its template and the instance, and leave them when removed', async () => {
    await t.w.createVM('tagged', { runPolicy: 'AlwaysOn' });
    await t.w.vmWhen('tagged', phaseIs('Running'), 'Running');
    const uid = await t.w.instanceUid('tagged');
    const ref = { namespace: t.w.ns, name: 'tagged' };
    await t.c.kvvmis.mergePatch(ref, { metadata: { labels: { 'set-by-someone': 'yes' } } });

    await t.c.vms.mergePatch(ref, { metadata: { labels: { team: 'a', tier: 'web' }, annotations: { 'example.com/owner': 'ops' } } });
    const on = await eventually(async () => {
      const m = await where('tagged');
      return everywhere(m, (x) => x.labels?.['tier'] === 'web' && x.annotations?.['example.com/owner'] === 'ops') && m;
    }, 'labels and annotation on the internal VM, its template and the instance');
    expect(on.kvvm.labels).toMatchObject({ team: 'a', 'virtualization.deckhouse.io/virtual-machine-name': 'tagged' });
    expect(on.vmi.labels).toMatchObject({ team: 'a', 'set-by-someone': 'yes' });

    await t.c.vms.mergePatch(ref, { metadata: { labels: { tier: null, team: 'b' }, annotations: { 'example.com/owner': null } } });
    const off = await eventually(async () => {
      const m = await where('tagged');
      return everywhere(m, (x) => !('tier' in (x.labels ?? {})) && !('example.com/owner' in (x.annotations ?? {})) && x.labels?.['team'] === 'b') && m;
    }, 'the removed label and annotation gone everywhere');
    expect(off.vmi.labels).toMatchObject({ 'set-by-someone': 'yes' });

    // Metadata never waits for a restart: the same instance runs, nothing awaits.
    const vm = await t.c.vms.get(ref);
    expect(vm.status?.restartAwaitingChanges).toBeUndefined();
    expect(vm.status?.conditions?.find((c) => c.type === 'AwaitingRestartToApplyConfiguration')).toBeUndefined();
    expect(await t.w.instanceUid('tagged')).toBe(uid);
  });

  it('a new instance starts with the VM’s labels (the template carries them)', async () => {
    await t.w.createVM('born', { runPolicy: 'Manual' });
    await t.w.vmWhen('born', phaseIs('Stopped'), 'Stopped');
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'born' }, { metadata: { labels: { team: 'c' } } });
    await eventually(async () => (await t.c.kvvms.get({ namespace: t.w.ns, name: 'born' })).spec.template.metadata?.labels?.['team'] === 'c', 'the template');
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'born' }, { spec: { runPolicy: 'AlwaysOn' } });
    await t.w.vmWhen('born', phaseIs('Running'), 'Running');
    expect((await where('born')).vmi.labels?.['team']).toBe('c');
  });

  it('a VM annotation that names one of the controller’s own keys does not replace it, and the VM keeps running', async () => {
    await t.w.createVM('sly', { runPolicy: 'AlwaysOn' });
    await t.w.vmWhen('sly', phaseIs('Running'), 'Running');
    const ref = { namespace: t.w.ns, name: 'sly' };
    await t.c.vms.mergePatch(ref, { metadata: { annotations: { [LAST_APPLIED_SPEC]: 'forged', 'example.com/mark': 'x' } } });
    await eventually(async () => (await where('sly')).vmi.annotations?.['example.com/mark'] === 'x', 'the other annotation propagated');
    const kvvm = await t.c.kvvms.get(ref);
    expect(JSON.parse(kvvm.metadata.annotations?.[LAST_APPLIED_SPEC] ?? '')).toMatchObject({ cpu: { cores: 2 } });
    expect((await t.c.vms.get(ref)).status?.phase).toBe('Running');
  });
});
