import { describe, expect, it } from '@jest/globals';
import { vmop } from './builders.js';
import { eventually } from './fixtures.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { phaseIs, useWorld } from './world.js';

const t = useWorld('ctl-power');

/** A new instance replaced `old` and runs. */
async function restarted(name: string, old: string | undefined): Promise<string> {
  const uid = await eventually(async () => {
    const now = await t.w.instanceUid(name);
    return now !== undefined && now !== old && now;
  }, `${name}: a new instance`);
  await t.w.vmWhen(name, phaseIs('Running'), 'Running again');
  return uid;
}

/**
 * The controller settled on Stopped for the VM's current spec, and nothing is set to start it: no start
 * requested from KubeVirt, no runStrategy that makes KubeVirt start it, no instance. Looked at once the
 * controller has seen the latest VM, internal VM and instance (its caches hold the versions the
 * apiserver has) and holds nothing for the VM (no key queued, in flight or scheduled in the vm and
 * vmop reconcilers): a later wrong start would need a reconcile that nothing is left to trigger, so
 * one instant here stands for every later one, which a look at some arbitrary instant cannot say.
 */
async function stayedStopped(name: string): Promise<void> {
  await t.w.vmWhen(name, (v) => phaseIs('Stopped')(v) && v.status?.observedGeneration === v.metadata.generation, 'Stopped');
  const { running } = t.w.ctl;
  const key = `${t.w.ns}/${name}`;
  const ref = { namespace: t.w.ns, name };
  await waitFor(`${name}: the controller has seen everything and holds nothing for it`, async () => {
    if (['vm', 'vmop'].some((runner) => running.runners.get(runner)?.queue.holds(key) === true)) return false;
    const [vm, kvvm, instance] = await Promise.all([t.c.vms.get(ref), t.c.kvvms.get(ref), t.w.instanceUid(name)]);
    return (
      running.caches.vms.get(key)?.metadata.resourceVersion === vm.metadata.resourceVersion &&
      running.caches.kvvms.get(key)?.metadata.resourceVersion === kvvm.metadata.resourceVersion &&
      running.caches.kvvmis.get(key)?.metadata.uid === instance
    );
  });
  const kvvm = await t.c.kvvms.get(ref);
  expect(kvvm.spec.runStrategy).not.toBe('Always');
  expect((kvvm.status?.stateChangeRequests ?? []).filter((r) => r.action === 'Start')).toEqual([]);
  expect(await t.w.instanceUid(name)).toBeUndefined();
}

describe('runPolicy', () => {
  it('AlwaysOn starts the VM and restarts it after a guest shutdown, a guest reset and a failure', async () => {
    await t.w.createVM('always-on', { runPolicy: 'AlwaysOn' });
    await t.w.vmWhen('always-on', phaseIs('Running'), 'Running');
    const kvvm = await t.c.kvvms.get({ namespace: t.w.ns, name: 'always-on' });
    expect(kvvm.spec.runStrategy).toBe('Manual');
    let uid = await t.w.instanceUid('always-on');
    await t.w.kubevirt.guestEnded('always-on', 'guest-shutdown');
    uid = await restarted('always-on', uid);
    await t.w.kubevirt.guestEnded('always-on', 'guest-reset');
    uid = await restarted('always-on', uid);
    await t.w.kubevirt.fail('always-on');
    await restarted('always-on', uid);
  });

  it('AlwaysOff builds the internal VM but never starts it', async () => {
    await t.w.createVM('always-off', { runPolicy: 'AlwaysOff' });
    await eventually(() => t.c.kvvms.get({ namespace: t.w.ns, name: 'always-off' }), 'internal VM');
    await stayedStopped('always-off');
  });

  it('Manual starts only on request; a guest reset restarts it, a guest shutdown stops it', async () => {
    await t.w.createVM('manual', { runPolicy: 'Manual' });
    await stayedStopped('manual');
    await t.c.vmops.create(vmop(t.w.scope, 'manual-start', 'manual', 'Start'));
    await t.w.vmWhen('manual', phaseIs('Running'), 'Running after Start');
    const uid = await t.w.instanceUid('manual');
    await t.w.kubevirt.guestEnded('manual', 'guest-reset');
    await restarted('manual', uid);
    await t.w.kubevirt.guestEnded('manual', 'guest-shutdown');
    await stayedStopped('manual');
  });

  it('AlwaysOnUnlessStoppedManually starts once, stays off after a guest shutdown, restarts after a reset or a failure', async () => {
    await t.w.createVM('aousm');
    let vm = await t.w.vmWhen('aousm', phaseIs('Running'), 'Running (first start by KubeVirt)');
    expect(vm.status?.stats?.phasesTransitions?.map((t) => t.phase)).toContain('Running');
    let uid = await t.w.instanceUid('aousm');
    await t.w.kubevirt.guestEnded('aousm', 'guest-reset');
    uid = await restarted('aousm', uid);
    await t.w.kubevirt.fail('aousm');
    await restarted('aousm', uid);
    await t.w.kubevirt.guestEnded('aousm', 'guest-shutdown');
    await stayedStopped('aousm');
    await t.c.vmops.create(vmop(t.w.scope, 'aousm-start', 'aousm', 'Start'));
    vm = await t.w.vmWhen('aousm', phaseIs('Running'), 'Running after Start');
    expect(vm.status?.nodeName).toBe(t.w.nodeName);
  });

  it('switching AlwaysOff to AlwaysOnUnlessStoppedManually starts the VM, and back to AlwaysOff stops it', async () => {
    await t.w.createVM('switch', { runPolicy: 'AlwaysOff' });
    await stayedStopped('switch');
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'switch' }, { spec: { runPolicy: 'AlwaysOnUnlessStoppedManually' } });
    await t.w.vmWhen('switch', phaseIs('Running'), 'Running after the switch');
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'switch' }, { spec: { runPolicy: 'AlwaysOff' } });
    await stayedStopped('switch');
  });
});
