/**
 * FilesystemFrozen as the original shows it: a freeze through virt-api (the stand-in, reaching a
 * simulated guest's agent as virt-handler does: the instance's `fsFreezeStatus: frozen`) shows on the
 * VM as FilesystemFrozen True, reason Frozen; the thaw, or the freeze's own unfreeze timeout, takes it
 * away. A freeze of a VM that does not run is refused naming it, and the stand-in goes on serving.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Condition } from '../../../shared/api/k8s/core.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { rootLogger } from '../../../shared/log/index.js';
import { FILESYSTEM_FROZEN_MESSAGE } from '../../../daemons/controller/reconcilers/vm/handlers/filesystem.js';
import { VirtApiStandIn } from '../../../platform/simulators/kubevirt-simulator/virt-api/virt-api-stand-in.js';
import { simulatedFreeze, withSimulatedGuests, type SimulatedFreeze } from '../../../platform/simulators/kubevirt-simulator/virt-handler/fs-freeze.js';
import { phaseIs, useWorld } from './world.js';

const t = useWorld('ctl-vmfs');
let frozen: SimulatedFreeze;
let standIn: VirtApiStandIn;

beforeAll(async () => {
  frozen = simulatedFreeze(t.c.kvvmis, rootLogger);
  standIn = new VirtApiStandIn({ port: 0, log: rootLogger, guests: withSimulatedGuests(undefined, frozen) });
  await standIn.start();
});
afterAll(async () => {
  frozen.stop();
  await standIn.stop();
});

const cond = (v: VirtualMachine, type: string): Condition | undefined => v.status?.conditions?.find((c) => c.type === type);
const isFrozen = (v: VirtualMachine): boolean => cond(v, 'FilesystemFrozen')?.status === 'True';
const agentReady = (v: VirtualMachine): boolean => phaseIs('Running')(v) && cond(v, 'AgentReady')?.status === 'True';

/** PUT a subresource of the instance, as the subresources API calls virt-api. */
async function put(vm: string, sub: 'freeze' | 'unfreeze', body?: unknown): Promise<{ status: number; message: string }> {
  const res = await fetch(`${standIn.url}/apis/subresources.kubevirt.io/v1/namespaces/${t.w.ns}/virtualmachineinstances/${vm}/${sub}`, {
    method: 'PUT',
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.text();
  return { status: res.status, message: text === '' ? '' : ((JSON.parse(text) as { message?: string }).message ?? '') };
}

describe('FilesystemFrozen', () => {
  it('a freeze shows FilesystemFrozen True with reason Frozen on the VM, and the thaw takes it away', async () => {
    await t.w.createVM('db');
    const running = await t.w.vmWhen('db', agentReady, 'Running with its agent');
    expect(cond(running, 'FilesystemFrozen')).toBeUndefined();

    expect((await put('db', 'freeze', { unfreezeTimeout: '10m' })).status).toBe(200);
    expect((await t.c.kvvmis.get({ namespace: t.w.ns, name: 'db' })).status?.fsFreezeStatus).toBe('frozen');
    const v = await t.w.vmWhen('db', isFrozen, 'FilesystemFrozen True');
    expect(cond(v, 'FilesystemFrozen')).toMatchObject({ status: 'True', reason: 'Frozen', message: FILESYSTEM_FROZEN_MESSAGE });

    expect((await put('db', 'unfreeze')).status).toBe(200);
    await t.w.vmWhen('db', (x) => cond(x, 'FilesystemFrozen') === undefined, 'FilesystemFrozen gone after the thaw');
    expect((await t.c.kvvmis.get({ namespace: t.w.ns, name: 'db' })).status?.fsFreezeStatus).toBeUndefined();
  });

  it('a freeze thaws by itself after its unfreeze timeout, and the condition goes', async () => {
    await t.w.createVM('cache');
    await t.w.vmWhen('cache', agentReady, 'Running with its agent');
    expect((await put('cache', 'freeze', { unfreezeTimeout: '1s' })).status).toBe(200);
    await t.w.vmWhen('cache', isFrozen, 'FilesystemFrozen True');
    await t.w.vmWhen('cache', (x) => cond(x, 'FilesystemFrozen') === undefined, 'thawed by the unfreeze timeout');
  });

  it('an instance reporting frozen while its agent is not connected shows no FilesystemFrozen (AgentReady False)', async () => {
    await t.w.createVM('mute');
    await t.w.vmWhen('mute', agentReady, 'Running with its agent');
    const ref = { namespace: t.w.ns, name: 'mute' };
    const vmi = await t.c.kvvmis.get(ref);
    const others = (vmi.status?.conditions ?? []).filter((c) => c.type !== 'AgentConnected');
    await t.c.kvvmis.mergePatch(ref, {
      status: { fsFreezeStatus: 'frozen', conditions: [...others, { type: 'AgentConnected', status: 'False', message: 'agent gone' }] },
    });
    const v = await t.w.vmWhen('mute', (x) => cond(x, 'AgentReady')?.status === 'False', 'AgentReady False');
    expect(cond(v, 'FilesystemFrozen')).toBeUndefined();
    // And its freeze is refused naming the agent; the stand-in goes on serving.
    expect(await put('mute', 'freeze')).toEqual({ status: 500, message: `freeze of ${t.w.ns}/mute: the guest agent of VMI ${t.w.ns}/mute is not connected` });
  });

  it('refuses a freeze of a VM that does not run, naming it, and goes on serving', async () => {
    expect(await put('nowhere', 'freeze')).toEqual({ status: 500, message: `freeze of ${t.w.ns}/nowhere: VMI ${t.w.ns}/nowhere is not running` });
    expect((await put('nowhere', 'freeze', { unfreezeTimeout: 'soon' })).status).toBe(400);
    await t.w.createVM('late');
    await t.w.vmWhen('late', agentReady, 'Running with its agent');
    expect((await put('late', 'freeze')).status).toBe(200);
    await t.w.vmWhen('late', isFrozen, 'FilesystemFrozen True');
  });
});
