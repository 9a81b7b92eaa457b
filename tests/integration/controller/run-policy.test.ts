import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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
  w = await startWorld(kube, c, 'ctl-power');
});
afterAll(async () => {
  await w.stop();
  kube.close();
});

/** A new instance replaced `old` and runs. */
async function restarted(name: string, old: string | undefined): Promise<string> {
  const uid = await eventually(async () => {
    const now = await w.instanceUid(name);
    return now !== undefined && now !== old && now;
  }, `${name}: a new instance`);
  await w.vmWhen(name, phaseIs('Running'), 'Running again');
  return uid;
}

async function stayedStopped(name: string): Promise<void> {
  await w.vmWhen(name, phaseIs('Stopped'), 'Stopped');
  await pause(500);
  expect(await w.instanceUid(name)).toBeUndefined();
  expect((await c.vms.get({ namespace: w.ns, name })).status?.phase).toBe('Stopped');
}

describe('runPolicy', () => {
  it('AlwaysOn starts the VM and restarts it after a guest shutdown, a guest reset and a failure', async () => {
    await w.createVM('always-on', { runPolicy: 'AlwaysOn' });
    await w.vmWhen('always-on', phaseIs('Running'), 'Running');
    const kvvm = await c.kvvms.get({ namespace: w.ns, name: 'always-on' });
    expect(kvvm.spec.runStrategy).toBe('Manual');
    let uid = await w.instanceUid('always-on');
    await w.kubevirt.guestEnded('always-on', 'guest-shutdown');
    uid = await restarted('always-on', uid);
    await w.kubevirt.guestEnded('always-on', 'guest-reset');
    uid = await restarted('always-on', uid);
    await w.kubevirt.fail('always-on');
    await restarted('always-on', uid);
  });

  it('AlwaysOff builds the internal VM but never starts it', async () => {
    await w.createVM('always-off', { runPolicy: 'AlwaysOff' });
    await eventually(() => c.kvvms.get({ namespace: w.ns, name: 'always-off' }), 'internal VM');
    await stayedStopped('always-off');
  });

  it('Manual starts only on request; a guest reset restarts it, a guest shutdown stops it', async () => {
    await w.createVM('manual', { runPolicy: 'Manual' });
    await stayedStopped('manual');
    await c.vmops.create(vmop(w.scope, 'manual-start', 'manual', 'Start'));
    await w.vmWhen('manual', phaseIs('Running'), 'Running after Start');
    const uid = await w.instanceUid('manual');
    await w.kubevirt.guestEnded('manual', 'guest-reset');
    await restarted('manual', uid);
    await w.kubevirt.guestEnded('manual', 'guest-shutdown');
    await stayedStopped('manual');
  });

  it('AlwaysOnUnlessStoppedManually starts once, stays off after a guest shutdown, restarts after a reset or a failure', async () => {
    await w.createVM('aousm');
    let vm = await w.vmWhen('aousm', phaseIs('Running'), 'Running (first start by KubeVirt)');
    expect(vm.status?.stats?.phasesTransitions?.map((t) => t.phase)).toContain('Running');
    let uid = await w.instanceUid('aousm');
    await w.kubevirt.guestEnded('aousm', 'guest-reset');
    uid = await restarted('aousm', uid);
    await w.kubevirt.fail('aousm');
    await restarted('aousm', uid);
    await w.kubevirt.guestEnded('aousm', 'guest-shutdown');
    await stayedStopped('aousm');
    await c.vmops.create(vmop(w.scope, 'aousm-start', 'aousm', 'Start'));
    vm = await w.vmWhen('aousm', phaseIs('Running'), 'Running after Start');
    expect(vm.status?.nodeName).toBe(w.nodeName);
  });

  it('switching AlwaysOff to AlwaysOnUnlessStoppedManually starts the VM, and back to AlwaysOff stops it', async () => {
    await w.createVM('switch', { runPolicy: 'AlwaysOff' });
    await stayedStopped('switch');
    await c.vms.mergePatch({ namespace: w.ns, name: 'switch' }, { spec: { runPolicy: 'AlwaysOnUnlessStoppedManually' } });
    await w.vmWhen('switch', phaseIs('Running'), 'Running after the switch');
    await c.vms.mergePatch({ namespace: w.ns, name: 'switch' }, { spec: { runPolicy: 'AlwaysOff' } });
    await stayedStopped('switch');
  });
});
