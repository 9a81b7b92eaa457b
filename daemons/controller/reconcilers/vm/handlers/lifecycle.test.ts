/**
 * The VM lifecycle handler on its own: phase (and its history), node, the Running condition,
 * resources, networks, migration state and observedGeneration from what the earlier handlers found;
 * a VM still waiting for a dependency is looked at again later.
 */
import { describe, expect, it } from '@jest/globals';
import { CREATED_BY_LABEL, VM_NAME_LABEL } from '../../../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import type { Pod } from '../../../kube/resources.js';
import { handlerContext, inMemoryDeps } from '../../../testing/in-memory.js';
import { initVMState } from '../index.js';
import type { VMState } from '../state.js';
import { goDuration, launchTimes, lifecycleHandler } from './lifecycle.js';

const NOW = new Date('2026-03-01T10:00:00Z');
const vm = (extra: Partial<VirtualMachine['metadata']> = {}): VirtualMachine => {
  const v = vmOf({ namespace: 'ns', id: 'unit' }, 'web', 'generic', { cpu: { cores: 4, coreFraction: '50%' } });
  return { ...v, metadata: { ...v.metadata, uid: 'vm-uid', generation: 3, ...extra } };
};
const kvvm = (printableStatus?: string): InternalVirtualMachine =>
  ({
    metadata: { namespace: 'ns', name: 'web' },
    spec: { runStrategy: 'Manual', template: {} },
    ...(printableStatus ? { status: { printableStatus } } : {}),
  }) as unknown as InternalVirtualMachine;
const kvvmi = (phase: string, status: Record<string, unknown> = {}): InternalVirtualMachineInstance =>
  ({
    metadata: { namespace: 'ns', name: 'web', uid: 'vmi-1' },
    spec: {},
    status: { phase, nodeName: 'node-a', ...status },
  }) as unknown as InternalVirtualMachineInstance;
const synchronizedFalse = (reason: string, message: string): Record<string, string> => ({ type: 'Synchronized', status: 'False', reason, message });
/** What virt-controller copies onto an instance whose launcher pod the scheduler cannot place. */
const unschedulable = (message: string): { type: string; status: string; reason: string; message: string } => ({
  type: 'PodScheduled',
  status: 'False',
  reason: 'Unschedulable',
  message,
});
/** A launcher pod of the instance `vmi-1` on node-a. */
/** A pod whose containers the kubelet is still creating (its volumes being attached and mounted). */
const creating: Pod['status'] = { phase: 'Pending', containerStatuses: [{ name: 'compute', state: { waiting: { reason: 'ContainerCreating' } } }] };
const launcherPod = (status: Pod['status'], name = 'virt-launcher-web-abcde'): Pod => ({
  metadata: { namespace: 'ns', name, labels: { [VM_NAME_LABEL]: 'web', [CREATED_BY_LABEL]: 'vmi-1' } },
  spec: { nodeName: 'node-a' },
  status,
});

interface Row {
  what: string;
  vm?: VirtualMachine;
  kvvm?: InternalVirtualMachine;
  kvvmi?: InternalVirtualMachineInstance;
  waitingFor?: string[];
  startPending?: boolean;
  pods?: Pod[];
  /** The launcher's volume error by pod name. */
  volumeErrors?: Record<string, string>;
  phase: string;
  running: { status: string; reason: string; message?: RegExp };
  node?: string;
  requeue?: boolean;
}

describe('the VM lifecycle handler', () => {
  it.each<Row>([
    {
      what: 'is Pending without an internal VM, saying what it waits for, and looks again later',
      waitingFor: ['VirtualDisk root not found'],
      phase: 'Pending',
      running: { status: 'False', reason: 'NotRunning', message: /waiting for: VirtualDisk root not found/ },
      requeue: true,
    },
    {
      what: 'is Stopped with an internal VM and no instance',
      kvvm: kvvm(),
      phase: 'Stopped',
      running: { status: 'False', reason: 'NotRunning', message: /is stopped/ },
    },
    {
      what: 'is Pending (not Stopped) while a start is due',
      kvvm: kvvm(),
      startPending: true,
      phase: 'Pending',
      running: { status: 'False', reason: 'NotRunning' },
    },
    {
      what: 'is Pending with PodNotStarted, as the original, when KubeVirt cannot schedule it',
      kvvm: kvvm('ErrorUnschedulable'),
      kvvmi: kvvmi('Scheduling'),
      phase: 'Pending',
      running: { status: 'False', reason: 'PodNotStarted', message: /^Failed to start pod: ErrorUnschedulable, Scheduling$/ },
    },
    {
      what: "is Pending with PodNotStarted, as the original, saying the scheduler's reason and message when it cannot place the launcher pod",
      kvvm: kvvm('ErrorUnschedulable'),
      kvvmi: kvvmi('Scheduling', { nodeName: undefined, conditions: [unschedulable('0/3 nodes are available: 3 Insufficient memory.')] }),
      phase: 'Pending',
      running: { status: 'False', reason: 'PodNotStarted', message: /^Unschedulable: 0\/3 nodes are available: 3 Insufficient memory\.$/ },
    },
    {
      what: 'is Pending, not Starting, while the launcher pod is unschedulable and the internal VM still says Starting',
      kvvm: kvvm('Starting'),
      kvvmi: kvvmi('Scheduling', {
        nodeName: undefined,
        conditions: [unschedulable("0/1 nodes are available: 1 node(s) did not match Pod's node affinity/selector.")],
      }),
      phase: 'Pending',
      running: { status: 'False', reason: 'PodNotStarted', message: /^Unschedulable: 0\/1 nodes are available: 1 node\(s\) did not match/ },
    },
    {
      what: "is Pending with the scheduler's message from the launcher pod itself while the instance has no copy of it (virt-controller could not patch the pod)",
      kvvm: kvvm('Starting'),
      kvvmi: kvvmi('Pending', { nodeName: undefined }),
      pods: [launcherPod({ phase: 'Pending', conditions: [unschedulable("0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")] })],
      phase: 'Pending',
      running: { status: 'False', reason: 'PodNotStarted', message: /^Unschedulable: 0\/2 nodes are available: 2 node\(s\) didn't match/ },
    },
    {
      what: 'is Stopping, not Pending, when an unschedulable instance is being deleted',
      kvvm: kvvm('ErrorUnschedulable'),
      kvvmi: {
        ...kvvmi('Scheduling', { nodeName: undefined, conditions: [unschedulable('0/3 nodes are available.')] }),
        metadata: { namespace: 'ns', name: 'web', uid: 'vmi-1', deletionTimestamp: '2026-03-01T09:59:00Z' },
      },
      phase: 'Stopping',
      running: { status: 'False', reason: 'NotRunning', message: /is stopping/ },
    },
    {
      what: "is Starting with PodNotStarted, as the original, saying the launcher pod's reason and message (a kubelet refused it)",
      kvvm: kvvm(),
      kvvmi: kvvmi('Scheduled'),
      pods: [launcherPod({ phase: 'Failed', reason: 'NodeAffinity', message: 'Pod was rejected: Predicate NodeAffinity failed' })],
      phase: 'Starting',
      running: { status: 'False', reason: 'PodNotStarted', message: /^NodeAffinity: Pod was rejected: Predicate NodeAffinity failed$/ },
      node: 'node-a',
    },
    {
      what: 'is Starting with NotRunning while the launcher pod has no message',
      kvvm: kvvm(),
      kvvmi: kvvmi('Scheduled'),
      pods: [launcherPod({ phase: 'Pending' })],
      phase: 'Starting',
      running: { status: 'False', reason: 'NotRunning', message: /is starting/ },
      node: 'node-a',
    },
    {
      what: 'is Starting with PodContainerCreating, as the original, while its only launcher pod is being created, and looks again later',
      kvvm: kvvm(),
      kvvmi: kvvmi('Scheduled'),
      pods: [launcherPod(creating)],
      phase: 'Starting',
      running: { status: 'False', reason: 'PodContainerCreating', message: /^Pod is in ContainerCreating phase\. Check the pod for more details\.$/ },
      node: 'node-a',
      requeue: true,
    },
    {
      what: "is Starting with PodVolumeErrors, as the original, when the pod's latest event says a volume cannot be mounted",
      kvvm: kvvm(),
      kvvmi: kvvmi('Scheduled'),
      pods: [launcherPod(creating)],
      volumeErrors: { 'virt-launcher-web-abcde': 'FailedMount: MountVolume.SetUp failed for volume "vd-root" : rpc error: timed out' },
      phase: 'Starting',
      running: {
        status: 'False',
        reason: 'PodVolumeErrors',
        message: /^Volume errors detected on Pod: FailedMount: MountVolume\.SetUp failed for volume "vd-root" : rpc error: timed out$/,
      },
      node: 'node-a',
      requeue: true,
    },
    {
      what: 'says neither while one of two launcher pods is being created without a volume error (a migration target), and looks again later',
      kvvm: kvvm(),
      kvvmi: kvvmi('Scheduled'),
      pods: [launcherPod({ phase: 'Running' }), launcherPod(creating, 'virt-launcher-web-target')],
      phase: 'Starting',
      running: { status: 'False', reason: 'NotRunning', message: /is starting/ },
      node: 'node-a',
      requeue: true,
    },
    {
      what: "is Pending with PodNotStarted when the launcher's image cannot be pulled, the instance's Synchronized appended",
      kvvm: kvvm('ErrImagePull'),
      kvvmi: kvvmi('Scheduling', { conditions: [synchronizedFalse('ErrImagePull', 'rpc error: code = NotFound desc = image not found')] }),
      phase: 'Pending',
      running: {
        status: 'False',
        reason: 'PodNotStarted',
        message: /^Failed to start pod: ErrImagePull, Scheduling; ErrImagePull: rpc error: code = NotFound desc = image not found$/,
      },
    },
    ...['ImagePullBackOff', 'CrashLoopBackOff', 'DataVolumeError', 'ErrorPvcNotFound'].map((printable): Row => ({
      what: `is Pending with PodNotStarted, without an instance, while KubeVirt says ${printable}`,
      kvvm: kvvm(printable),
      phase: 'Pending',
      running: { status: 'False', reason: 'PodNotStarted', message: new RegExp(`^Failed to start pod: ${printable}$`) },
    })),
    {
      what: 'is Pending with InternalVirtualMachineError when KubeVirt cannot tell the state (printable status Unknown)',
      kvvm: kvvm('Unknown'),
      kvvmi: kvvmi('Unknown', { conditions: [synchronizedFalse('Unknown', 'node node-a is not responding')] }),
      phase: 'Pending',
      running: {
        status: 'False',
        reason: 'InternalVirtualMachineError',
        message: /^Internal virtual machine error: Unknown, Unknown; Unknown: node node-a is not responding$/,
      },
    },
    {
      what: 'stays Running when the internal VM still reports an old ErrImagePull',
      kvvm: kvvm('ErrImagePull'),
      kvvmi: kvvmi('Running'),
      phase: 'Running',
      running: { status: 'True', reason: 'Running' },
      node: 'node-a',
    },
    {
      what: 'is Starting while the instance is scheduled, on its node',
      kvvm: kvvm(),
      kvvmi: kvvmi('Scheduled'),
      phase: 'Starting',
      running: { status: 'False', reason: 'NotRunning' },
      node: 'node-a',
    },
    {
      what: "is Starting, saying why, while the node cannot start the guest (the instance's Synchronized=False)",
      kvvm: kvvm(),
      kvvmi: kvvmi('Scheduled', { conditions: [synchronizedFalse('InsufficientHostMemory', 'the guest needs 2048 MiB, the machine has 512 MiB available')] }),
      phase: 'Starting',
      running: { status: 'False', reason: 'InsufficientHostMemory', message: /^the guest needs 2048 MiB, the machine has 512 MiB available$/ },
      node: 'node-a',
    },
    {
      what: "is Starting with NotRunning when KubeVirt's reason is prose, which leads the message",
      kvvm: kvvm(),
      kvvmi: kvvmi('Scheduled', { conditions: [synchronizedFalse('Synchronizing with the Domain failed.', 'server error. command SyncVMI failed')] }),
      phase: 'Starting',
      running: { status: 'False', reason: 'NotRunning', message: /^Synchronizing with the Domain failed: server error\. command SyncVMI failed$/ },
      node: 'node-a',
    },
    {
      what: 'is Pending with PodNotStarted, as the original, when KubeVirt could not create the launcher pod',
      kvvm: kvvm(),
      kvvmi: kvvmi('Pending', { conditions: [synchronizedFalse('FailedCreate', 'pods "virt-launcher-web-x" is forbidden: exceeded quota')] }),
      phase: 'Pending',
      running: {
        status: 'False',
        reason: 'PodNotStarted',
        message: /^Failed to start pod: Starting, Pending; FailedCreate: pods "virt-launcher-web-x" is forbidden: exceeded quota$/,
      },
    },
    {
      what: 'stays Running when a running instance still carries an old Synchronized=False',
      kvvm: kvvm(),
      kvvmi: kvvmi('Running', { conditions: [synchronizedFalse('InsufficientHostMemory', 'no room')] }),
      phase: 'Running',
      running: { status: 'True', reason: 'Running' },
      node: 'node-a',
    },
    {
      what: 'is Running on the instance node',
      kvvm: kvvm(),
      kvvmi: kvvmi('Running'),
      phase: 'Running',
      running: { status: 'True', reason: 'Running' },
      node: 'node-a',
    },
    {
      what: 'stays Running, with reason NoBootableDevice, when the guest firmware finds nothing to boot',
      kvvm: kvvm(),
      kvvmi: kvvmi('Running', { conditions: [{ type: 'GuestBootable', status: 'False', reason: 'NoBootableDevice', message: 'No bootable device.' }] }),
      phase: 'Running',
      running: { status: 'True', reason: 'NoBootableDevice', message: /No bootable device/ },
      node: 'node-a',
    },
    {
      what: 'is Migrating (and running) during a live migration',
      kvvm: kvvm(),
      kvvmi: kvvmi('Running', { migrationState: { startTimestamp: '2026-03-01T09:59:00Z', sourceNode: 'node-a', targetNode: 'node-b' } }),
      phase: 'Migrating',
      running: { status: 'True', reason: 'Running' },
      node: 'node-a',
    },
    {
      what: 'says the guest failed with InternalVirtualMachineError',
      kvvm: kvvm(),
      kvvmi: kvvmi('Failed'),
      phase: 'Stopped',
      running: { status: 'False', reason: 'InternalVirtualMachineError', message: /the guest failed/ },
      node: 'node-a',
    },
    {
      what: 'is Terminating while deleted',
      vm: vm({ deletionTimestamp: '2026-03-01T09:00:00Z' }),
      kvvm: kvvm(),
      kvvmi: kvvmi('Running'),
      phase: 'Terminating',
      running: { status: 'False', reason: 'NotRunning' },
      node: 'node-a',
    },
  ])('$what', async (row) => {
    const { deps, config } = inMemoryDeps({ seed: { pods: row.pods ?? [] }, ...(row.volumeErrors ? { volumeErrors: row.volumeErrors } : {}) });
    const state: VMState = initVMState(row.vm ?? vm());
    state.status.nodeName = 'stale-node';
    if (row.kvvm) state.kvvm = row.kvvm;
    if (row.kvvmi) state.kvvmi = row.kvvmi;
    state.waitingFor.push(...(row.waitingFor ?? []));
    state.startPending = row.startPending ?? false;

    const outcome = await lifecycleHandler(deps).handle(state, handlerContext(NOW));

    expect(state.status.phase).toBe(row.phase);
    const { message, ...running } = row.running;
    const cond = state.status.conditions?.find((c) => c.type === 'Running');
    expect(cond).toMatchObject(running);
    if (message) expect(cond?.message).toMatch(message);
    if (row.phase === 'Pending' || row.node === undefined) expect(state.status.nodeName).toBeUndefined();
    else expect(state.status.nodeName).toBe(row.node);
    expect(state.status.observedGeneration).toBe(3);
    expect(outcome ?? undefined).toEqual(row.requeue === true ? { requeueAfterMs: config.DEPENDENCY_RECHECK_INTERVAL } : undefined);
  });

  it('records a Warning event on the VM, as the original, when the Running condition turns to InternalVirtualMachineError, once per change', async () => {
    const { deps, events } = inMemoryDeps();
    const unknown = (message: string): VMState => {
      const state = initVMState(vm());
      state.kvvm = kvvm('Unknown');
      state.kvvmi = kvvmi('Unknown', { conditions: [synchronizedFalse('Unknown', message)] });
      return state;
    };
    const first = unknown('node node-a is not responding');
    await lifecycleHandler(deps).handle(first, handlerContext(NOW));
    expect(events).toEqual([
      {
        regarding: 'ns/web',
        type: 'Warning',
        reason: 'InternalVirtualMachineError',
        action: 'Start',
        note: 'Internal virtual machine error: Unknown, Unknown; Unknown: node node-a is not responding',
      },
    ]);

    // The next pass starts from the status written: the same condition again records nothing.
    const again = unknown('node node-a is not responding');
    const written = { ...again.obj, status: first.status } as VirtualMachine;
    const repeat = { ...initVMState(written), kvvm: again.kvvm, kvvmi: again.kvvmi };
    await lifecycleHandler(deps).handle(repeat, handlerContext(NOW));
    expect(events).toHaveLength(1);

    // Another message is another event; a VM not in error records none.
    const changed = {
      ...initVMState(written),
      kvvm: again.kvvm,
      kvvmi: kvvmi('Unknown', { conditions: [synchronizedFalse('Unknown', 'the launcher pod vanished')] }),
    };
    await lifecycleHandler(deps).handle(changed, handlerContext(NOW));
    expect(events.map((e) => e.note)).toEqual([expect.stringContaining('not responding'), expect.stringContaining('the launcher pod vanished')]);
    const running = { ...initVMState(vm()), kvvm: kvvm(), kvvmi: kvvmi('Running') };
    await lifecycleHandler(deps).handle(running, handlerContext(NOW));
    expect(events).toHaveLength(2);
  });

  it('records a phase change once, with its time, keeping the last five, and the last start time', async () => {
    const { deps } = inMemoryDeps();
    const old = Array.from({ length: 10 }, (_, i) => ({ phase: i % 2 === 0 ? 'Stopped' : 'Starting', timestamp: `2026-02-01T00:00:0${i}Z` }));
    const state = initVMState({ ...vm(), status: { phase: 'Starting', stats: { phasesTransitions: old } } } as VirtualMachine);
    state.kvvm = kvvm();
    state.kvvmi = kvvmi('Running');
    await lifecycleHandler(deps).handle(state, handlerContext(NOW));
    const transitions = state.status.stats?.phasesTransitions ?? [];
    expect(transitions).toHaveLength(5);
    expect(transitions.at(-1)).toEqual({ phase: 'Running', timestamp: '2026-03-01T10:00:00Z' });
    expect(transitions[0]).toEqual(old[6]);
    expect(state.status.stats?.lastStartTime).toBe('2026-03-01T10:00:00Z');

    // The same phase again adds nothing.
    await lifecycleHandler(deps).handle(state, handlerContext(new Date('2026-03-01T11:00:00Z')));
    expect(state.status.stats?.phasesTransitions).toEqual(transitions);
  });

  it('reports resources from the spec and class, the main network address, and a finished migration', async () => {
    const { deps } = inMemoryDeps();
    const state = initVMState(vm());
    state.kvvm = kvvm();
    state.kvvmi = kvvmi('Running', {
      migrationState: {
        startTimestamp: '2026-03-01T09:00:00Z',
        endTimestamp: '2026-03-01T09:01:00Z',
        completed: true,
        sourceNode: 'a',
        sourcePod: 'p1',
        targetNode: 'b',
        targetPod: 'p2',
      },
    });
    state.ipAddress = '10.66.0.7';
    await lifecycleHandler(deps).handle(state, handlerContext(NOW));
    expect(state.status.resources).toEqual({
      // 4 cores at 50 %: 2 cores requested; 4 cores fit one socket.
      cpu: { cores: 4, coreFraction: '50%', requestedCores: '2', topology: { sockets: 1, coresPerSocket: 4 } },
      memory: { size: '2Gi' },
    });
    expect(state.status.networks).toEqual([{ id: 1, type: 'Main', name: 'default' }]);
    expect(state.status.migrationState).toEqual({
      startTimestamp: '2026-03-01T09:00:00Z',
      endTimestamp: '2026-03-01T09:01:00Z',
      source: { node: 'a', pod: 'p1' },
      target: { node: 'b', pod: 'p2' },
      result: 'Succeeded',
    });
  });

  it('shows the Main network even before the VM has an address, as the original does', async () => {
    const { deps } = inMemoryDeps();
    const state = initVMState({ ...vm(), status: { networks: [{ type: 'Main', ipAddress: '10.66.0.7' }] } });
    await lifecycleHandler(deps).handle(state, handlerContext(NOW));
    expect(state.status.networks).toEqual([{ id: 1, type: 'Main', name: 'default' }]);
  });
});

describe('launch durations', () => {
  it('prints whole seconds as Go prints a duration', () => {
    expect([0, 45_000, 65_000, 7_203_000].map(goDuration)).toEqual(['0s', '45s', '1m5s', '2h0m3s']);
  });

  it('measures waiting (Pending to Starting) and starting (Starting to Running), and forgets them when the VM stops', () => {
    const t = (phase: 'Pending' | 'Starting' | 'Running' | 'Stopped', timestamp: string) => ({ phase, timestamp });
    const pending = t('Pending', '2026-03-01T10:00:00Z');
    const starting = t('Starting', '2026-03-01T10:00:12Z');
    const running = t('Running', '2026-03-01T10:01:20Z');
    const waited = launchTimes({}, [pending, starting], 'Pending', 'Starting');
    expect(waited).toEqual({ waitingForDependencies: '12s' });
    expect(launchTimes(waited, [pending, starting, running], 'Starting', 'Running')).toEqual({ waitingForDependencies: '12s', virtualMachineStarting: '1m8s' });
    expect(launchTimes(waited, [pending, starting, running, t('Stopped', '2026-03-01T11:00:00Z')], 'Running', 'Stopped')).toEqual({});
  });
});
