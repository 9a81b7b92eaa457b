/**
 * d8v start/stop/restart against the real kube-apiserver, with the real controller (in-process) and
 * KubeVirt played by the simulator: the operation it creates is carried out, and its exit code says
 * how it ended.
 */
import { describe, expect, it } from '@jest/globals';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { phaseIs, useWorld } from '../controller/world.js';
import { d8v, kubeconfigFileFor } from './d8v.js';

const t = useWorld('cli-ops');

describe('d8v operations', () => {
  it('restart returns 0 once the VirtualMachineOperation completed, and the VM runs a new instance', async () => {
    await t.w.createVM('web', { runPolicy: 'AlwaysOn' });
    await t.w.vmWhen('web', phaseIs('Running'), 'Running');
    const before = await t.w.instanceUid('web');

    const ran = await d8v(['restart', 'web', '-n', t.w.ns, '--timeout', '2m']);
    expect(ran.stderr).toMatch(/VirtualMachineOperation .*\/restart-web-\w+ created: Restart of VirtualMachine web/);
    expect(ran.stderr).toMatch(/: Completed (\d+% )?\(OperationCompleted\)\n/);
    expect(ran.stdout).toMatch(new RegExp(`^VirtualMachine ${t.w.ns}/web restarted \\(virtualmachineoperation/restart-web-\\w+ Completed\\)\\n$`));
    expect(ran.code).toBe(0);

    const ops = (await t.c.vmops.list({ namespace: t.w.ns })).items.filter((op) => op.spec.virtualMachineName === 'web');
    expect(ops.map((op) => [op.spec.type, op.status?.phase])).toEqual([['Restart', 'Completed']]);
    await t.w.vmWhen('web', phaseIs('Running'), 'Running again');
    expect(await t.w.instanceUid('web')).not.toBe(before);
  });

  it('stop then start of a Manual VM each return 0 and leave the VM Stopped, then Running', async () => {
    await t.w.createVM('manual', { runPolicy: 'Manual' });
    await t.w.vmWhen('manual', phaseIs('Stopped'), 'Stopped');
    const started = await d8v(['start', 'manual', '-n', t.w.ns]);
    expect([started.code, started.stderr]).toEqual([0, expect.stringContaining('Completed')]);
    await t.w.vmWhen('manual', phaseIs('Running'), 'Running');
    const stopped = await d8v(['stop', 'manual', '--force', '-n', t.w.ns]);
    expect([stopped.code, stopped.stdout]).toEqual([0, expect.stringContaining(`VirtualMachine ${t.w.ns}/manual stopped`)]);
    await t.w.vmWhen('manual', phaseIs('Stopped'), 'Stopped');
  });

  it('an operation the controller fails returns 1 with the reason', async () => {
    await t.w.createVM('pinned', { runPolicy: 'AlwaysOn' });
    await t.w.vmWhen('pinned', phaseIs('Running'), 'Running');
    const ran = await d8v(['stop', 'pinned', '-n', t.w.ns]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/Failed: NotApplicableForVirtualMachineRunPolicy/);
  });

  it('a VM that does not exist returns 3 and creates nothing', async () => {
    const ran = await d8v(['restart', 'ghost', '-n', t.w.ns]);
    expect(ran.code).toBe(3);
    expect(ran.stderr).toContain(`get VirtualMachine ${t.w.ns}/ghost`);
    expect((await t.c.vmops.list({ namespace: t.w.ns })).items.filter((op) => op.spec.virtualMachineName === 'ghost')).toEqual([]);
  });

  it('a user without RBAC on VMs is refused by the apiserver: 4', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'd8v-cli-'));
    const kubeconfig = await kubeconfigFileFor('nobody@example.com', dir);
    const ran = await d8v(['restart', 'web', '-n', t.w.ns], { kubeconfig });
    expect(ran.code).toBe(4);
    expect(ran.stderr).toMatch(/forbidden/i);
  });
});
