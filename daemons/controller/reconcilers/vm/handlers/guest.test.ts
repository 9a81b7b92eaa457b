/** What the guest and its launcher report on the VM: AgentReady, Migratable, versions and the launcher pods. */
import { describe, expect, it } from '@jest/globals';
import { CREATED_BY_LABEL, LAUNCHER_LABEL, LAUNCHER_VALUE, VM_NAME_LABEL } from '../../../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import type { Pod } from '../../../kube/resources.js';
import { handlerContext, inMemoryDeps } from '../../../testing/in-memory.js';
import { initVMState } from '../index.js';
import type { VMState } from '../state.js';
import { DISKS_NOT_MIGRATABLE_MESSAGE, guestHandler } from './guest.js';

const vm = (): VirtualMachine => vmOf({ namespace: 'ns', id: 'unit' }, 'web', 'generic');
const kvvm = { metadata: { namespace: 'ns', name: 'web' }, spec: { template: {} } } as unknown as InternalVirtualMachine;
const kvvmi = (conditions: Record<string, unknown>[] = [], annotations: Record<string, string> = {}): InternalVirtualMachineInstance =>
  ({
    metadata: { namespace: 'ns', name: 'web', uid: 'vmi-2', annotations },
    spec: {},
    status: { phase: 'Running', nodeName: 'n2', conditions },
  }) as unknown as InternalVirtualMachineInstance;
const pod = (name: string, uid: string, node: string, created: string): Pod => ({
  metadata: {
    name,
    namespace: 'ns',
    uid: `pod-${name}`,
    creationTimestamp: created,
    labels: { [LAUNCHER_LABEL]: LAUNCHER_VALUE, [CREATED_BY_LABEL]: uid, [VM_NAME_LABEL]: 'web' },
  },
  spec: { nodeName: node },
  status: { phase: 'Running' },
});

async function run(phase: NonNullable<VMState['status']['phase']>, vmi: InternalVirtualMachineInstance | undefined, pods: Pod[] = []): Promise<VMState> {
  const { deps } = inMemoryDeps({ seed: { pods } });
  const state = initVMState(vm());
  state.status.phase = phase;
  state.kvvm = kvvm;
  state.kvvmi = vmi;
  await guestHandler(deps).handle(state, handlerContext());
  return state;
}
const cond = (s: VMState, type: string) => s.status.conditions?.find((c) => c.type === type);

describe('the VM guest handler', () => {
  it.each([
    ['is ready when the instance says the agent is connected', [{ type: 'AgentConnected', status: 'True' }], { status: 'True', reason: 'AgentReady' }],
    [
      'is not ready when the agent is disconnected',
      [{ type: 'AgentConnected', status: 'False', message: 'gone' }],
      { status: 'False', reason: 'AgentNotReady', message: 'gone' },
    ],
    ['cannot reach an agent the instance says nothing about', [], { status: 'False', reason: 'AgentNotReady', message: 'Failed to connect to VM Agent.' }],
  ])('AgentReady %s', async (_what, conditions, expected) => {
    expect(cond(await run('Running', kvvmi(conditions)), 'AgentReady')).toMatchObject(expected);
  });

  it('shows no AgentReady or Migratable while the VM is stopped', async () => {
    const s = await run('Stopped', undefined);
    expect(cond(s, 'AgentReady')).toBeUndefined();
    expect(cond(s, 'Migratable')).toBeUndefined();
  });

  it.each([
    ['migratable when KubeVirt says nothing against it', [], { status: 'True', reason: 'VirtualMachineMigratable' }],
    [
      'not migratable with disks that are not shared',
      [{ type: 'LiveMigratable', status: 'False', reason: 'DisksNotLiveMigratable' }],
      { status: 'False', reason: 'DisksNotMigratable', message: DISKS_NOT_MIGRATABLE_MESSAGE },
    ],
    [
      'not migratable with a host device',
      [{ type: 'LiveMigratable', status: 'False', reason: 'HostDeviceNotLiveMigratable' }],
      { status: 'False', reason: 'HostDevicesNotMigratable' },
    ],
    [
      'not migratable for any other reason, with KubeVirt message',
      [{ type: 'LiveMigratable', status: 'False', reason: 'InterfaceNotLiveMigratable', message: 'bridge interface' }],
      { status: 'False', reason: 'NonMigratable', message: 'bridge interface' },
    ],
  ])('Migratable: %s', async (_what, conditions, expected) => {
    expect(cond(await run('Running', kvvmi(conditions)), 'Migratable')).toMatchObject(expected);
  });

  it('reads the launcher versions while Running and keeps them after', async () => {
    const annotations = { 'versions.virtualization.deckhouse.io/qemu-version': '9.2.0', 'versions.virtualization.deckhouse.io/libvirt-version': '10.9.0' };
    const s = await run('Running', kvvmi([], annotations));
    expect(s.status.versions).toEqual({ qemu: '9.2.0', libvirt: '10.9.0' });
    const { deps } = inMemoryDeps();
    s.status.phase = 'Stopped';
    s.kvvmi = undefined;
    await guestHandler(deps).handle(s, handlerContext());
    expect(s.status.versions).toEqual({ qemu: '9.2.0', libvirt: '10.9.0' });
  });

  it('lists every launcher pod of the VM, oldest first, and marks the one on the instance node active', async () => {
    const pods = [
      pod('b', 'vmi-2', 'n2', '2026-01-01T00:02:00Z'),
      pod('a', 'vmi-2', 'n1', '2026-01-01T00:01:00Z'),
      pod('old', 'vmi-1', 'n1', '2026-01-01T00:00:00Z'),
    ];
    const s = await run('Running', kvvmi(), pods);
    expect(s.status.virtualMachinePods).toEqual([
      { name: 'old', active: false },
      { name: 'a', active: false },
      { name: 'b', active: true },
    ]);
  });

  it('has no pod list when the VM has no launcher pod', async () => {
    const s = await run('Stopped', undefined);
    expect(s.status.virtualMachinePods).toBeUndefined();
  });

  describe('guest OS and guestOSAgentStarting', () => {
    const osInfo = { id: 'debian', name: 'Debian' };
    const withInfo = (info?: Record<string, string>): InternalVirtualMachineInstance => {
      const v = kvvmi();
      return { ...v, status: { ...v.status, ...(info === undefined ? {} : { guestOSInfo: info }) } };
    };
    async function pass(vmi: InternalVirtualMachineInstance, had: boolean, launch: Record<string, string> = {}): Promise<VMState> {
      const { deps } = inMemoryDeps({});
      const state = initVMState(vm());
      state.status.phase = 'Running';
      state.status.stats = { phasesTransitions: [{ phase: 'Running', timestamp: '2026-01-01T00:00:10Z' }], launchTimeDuration: launch };
      if (had) state.status.guestOSInfo = osInfo;
      state.kvvm = kvvm;
      state.kvvmi = vmi;
      await guestHandler(deps).handle(state, handlerContext(new Date('2026-01-01T00:01:15.700Z')));
      return state;
    }

    it('measures from the Running transition to the pass that first sees the agent, in whole seconds', async () => {
      const s = await pass(withInfo(osInfo), false, { virtualMachineStarting: '3s' });
      expect(s.status.guestOSInfo).toEqual(osInfo);
      expect(s.status.stats?.launchTimeDuration).toEqual({ virtualMachineStarting: '3s', guestOSAgentStarting: '1m5s' });
    });

    it('keeps the measure once taken, and drops it with the guest OS while the agent does not answer', async () => {
      expect((await pass(withInfo(osInfo), true, { guestOSAgentStarting: '4s' })).status.stats?.launchTimeDuration).toEqual({ guestOSAgentStarting: '4s' });
      const silent = await pass(withInfo(), true, { guestOSAgentStarting: '4s' });
      expect(silent.status.guestOSInfo).toBeUndefined();
      expect(silent.status.stats?.launchTimeDuration).toBeUndefined();
    });
  });
});
