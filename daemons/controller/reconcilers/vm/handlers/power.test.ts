/**
 * The VM power handlers on their own, over in-memory kinds: powerDecision reads the internal VM, its
 * instance, how the guest ended (the launcher port) and the operations' request annotations;
 * powerState executes the decision as KubeVirt expects it (a state change request conditional on the
 * internal VM's version, or the instance deleted). The pure decision table is in ../power.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { ConflictError } from '../../../../../shared/errors/index.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import { Expectations } from '../../../engine/expectations.js';
import { handlerContext, inMemoryDeps } from '../../../testing/in-memory.js';
import type { GuestEvent } from '../power.js';
import { initVMState } from '../index.js';
import { RESTART_REQUESTED, START_REQUESTED, powerDecisionHandler } from './power-decision.js';
import { powerStateHandler } from './power-state.js';

type RunPolicy = VirtualMachine['spec']['runPolicy'];
const vm = (runPolicy: RunPolicy): VirtualMachine => vmOf({ namespace: 'ns', id: 'unit' }, 'web', 'generic', { runPolicy });
const kvvm = (runStrategy: string, annotations: Record<string, string> = {}, pendingRequests = 0): InternalVirtualMachine =>
  ({
    apiVersion: 'internal.virtualization.deckhouse.io/v1',
    kind: 'InternalVirtualizationVirtualMachine',
    metadata: { namespace: 'ns', name: 'web', annotations },
    spec: { runStrategy, template: {} },
    ...(pendingRequests > 0 ? { status: { stateChangeRequests: Array.from({ length: pendingRequests }, () => ({ action: 'Start' })) } } : {}),
  }) as unknown as InternalVirtualMachine;
const kvvmi = (phase: string, uid = 'vmi-1', deleting = false): InternalVirtualMachineInstance =>
  ({
    apiVersion: 'internal.virtualization.deckhouse.io/v1',
    kind: 'InternalVirtualizationVirtualMachineInstance',
    metadata: { namespace: 'ns', name: 'web', uid, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['keep'] } : {}) },
    spec: {},
    status: { phase },
  }) as unknown as InternalVirtualMachineInstance;

function world(seed: { kvvm?: InternalVirtualMachine; kvvmi?: InternalVirtualMachineInstance; guest?: GuestEvent }) {
  const { deps, kinds } = inMemoryDeps({ seed: { kvvms: seed.kvvm ? [seed.kvvm] : [], kvvmis: seed.kvvmi ? [seed.kvvmi] : [] } });
  const asked: string[] = [];
  deps.launcher = {
    ...deps.launcher,
    guestEvent: (vmi) => {
      asked.push(vmi.metadata.uid ?? '');
      return Promise.resolve(seed.guest);
    },
  };
  return { deps, kinds, asked, restarts: new Expectations<string>(60_000) };
}

interface DecisionRow {
  what: string;
  runPolicy: RunPolicy;
  kvvm?: InternalVirtualMachine;
  kvvmi?: InternalVirtualMachineInstance;
  guest?: GuestEvent;
  power: string;
  startPending: boolean;
  asksGuest?: boolean;
}

describe('the VM powerDecision handler', () => {
  it.each<DecisionRow>([
    { what: 'without an internal VM: a start is pending for AlwaysOn', runPolicy: 'AlwaysOn', power: 'none', startPending: true },
    {
      what: 'without an internal VM: a start is pending for AlwaysOnUnlessStoppedManually',
      runPolicy: 'AlwaysOnUnlessStoppedManually',
      power: 'none',
      startPending: true,
    },
    { what: 'without an internal VM: nothing is pending for Manual', runPolicy: 'Manual', power: 'none', startPending: false },
    { what: 'starts a stopped AlwaysOn VM', runPolicy: 'AlwaysOn', kvvm: kvvm('Manual'), power: 'start', startPending: true },
    { what: 'leaves a stopped Manual VM stopped', runPolicy: 'Manual', kvvm: kvvm('Manual'), power: 'none', startPending: false },
    {
      what: "starts a Manual VM on an operation's start request",
      runPolicy: 'Manual',
      kvvm: kvvm('Manual', { [START_REQUESTED]: '' }),
      power: 'start',
      startPending: true,
    },
    {
      what: 'sends nothing while KubeVirt has not consumed earlier requests',
      runPolicy: 'AlwaysOn',
      kvvm: kvvm('Manual', {}, 1),
      power: 'none',
      startPending: false,
    },
    {
      what: 'shows a first start KubeVirt makes itself (runStrategy Always) as pending',
      runPolicy: 'AlwaysOnUnlessStoppedManually',
      kvvm: kvvm('Always'),
      power: 'none',
      startPending: true,
    },
    { what: 'stops a running AlwaysOff VM', runPolicy: 'AlwaysOff', kvvm: kvvm('Manual'), kvvmi: kvvmi('Running'), power: 'stop', startPending: false },
    {
      what: 'restarts the instance an operation asked to restart',
      runPolicy: 'Manual',
      kvvm: kvvm('Manual', { [RESTART_REQUESTED]: 'vmi-1' }),
      kvvmi: kvvmi('Running'),
      power: 'restart',
      startPending: false,
    },
    {
      what: 'ignores a restart request for an older instance',
      runPolicy: 'Manual',
      kvvm: kvvm('Manual', { [RESTART_REQUESTED]: 'vmi-0' }),
      kvvmi: kvvmi('Running'),
      power: 'none',
      startPending: false,
    },
    {
      what: 'stops a Manual VM whose guest shut down (asking the launcher how it ended)',
      runPolicy: 'Manual',
      kvvm: kvvm('Manual'),
      kvvmi: kvvmi('Succeeded'),
      guest: 'guest-shutdown',
      power: 'stop',
      startPending: false,
      asksGuest: true,
    },
    {
      what: 'restarts a Manual VM whose guest reset',
      runPolicy: 'Manual',
      kvvm: kvvm('Manual'),
      kvvmi: kvvmi('Succeeded'),
      guest: 'guest-reset',
      power: 'restart',
      startPending: false,
      asksGuest: true,
    },
    {
      what: 'restarts an AlwaysOnUnlessStoppedManually VM whose guest failed, without asking',
      runPolicy: 'AlwaysOnUnlessStoppedManually',
      kvvm: kvvm('Manual'),
      kvvmi: kvvmi('Failed'),
      power: 'restart',
      startPending: false,
    },
    {
      what: 'waits for an instance being deleted',
      runPolicy: 'AlwaysOn',
      kvvm: kvvm('Manual'),
      kvvmi: kvvmi('Running', 'vmi-1', true),
      power: 'none',
      startPending: false,
    },
  ])('$what', async (row) => {
    const w = world({ ...(row.kvvm ? { kvvm: row.kvvm } : {}), ...(row.kvvmi ? { kvvmi: row.kvvmi } : {}), guest: row.guest });
    const state = initVMState(vm(row.runPolicy));

    await powerDecisionHandler(w.deps, w.restarts).handle(state, handlerContext());

    expect(state.power.kind).toBe(row.power);
    expect(state.startPending).toBe(row.startPending);
    expect(state.kvvm?.metadata.name).toBe(row.kvvm ? 'web' : undefined);
    expect(w.asked).toEqual(row.asksGuest === true ? ['vmi-1'] : []);
  });

  it('does not restart the same instance twice while the cache still shows it', async () => {
    const w = world({ kvvm: kvvm('Manual'), kvvmi: kvvmi('Failed') });
    w.restarts.set('ns/web', 'vmi-1');
    const state = initVMState(vm('AlwaysOn'));
    await powerDecisionHandler(w.deps, w.restarts).handle(state, handlerContext());
    expect(state.power.kind).toBe('none');
  });
});

describe('the VM powerState handler', () => {
  async function execute(power: ReturnType<typeof initVMState>['power'], seed: { kvvm: InternalVirtualMachine; kvvmi?: InternalVirtualMachineInstance }) {
    const w = world(seed);
    const state = initVMState(vm('Manual'));
    state.kvvm = w.deps.caches.kvvms.get('ns/web');
    state.kvvmi = w.deps.caches.kvvmis.get('ns/web');
    state.power = power;
    await powerStateHandler(w.deps, w.restarts).handle(state, handlerContext());
    return { ...w, state };
  }

  it('does nothing without a decision', async () => {
    const w = await execute({ kind: 'none' }, { kvvm: kvvm('Manual') });
    expect(w.kinds.kvvms.calls).toEqual([]);
    expect(w.kinds.kvvmis.calls).toEqual([]);
  });

  it('starts with a Start state change request, conditional on the version decided on, and keeps the new copy', async () => {
    const w = await execute({ kind: 'start', why: 'test' }, { kvvm: kvvm('Manual') });
    const [call] = w.kinds.kvvms.calls;
    expect(call?.verb).toBe('patchStatus');
    expect(call?.body).toEqual({ metadata: { resourceVersion: expect.any(String) }, status: { stateChangeRequests: [{ action: 'Start' }] } });
    expect(w.kinds.kvvms.stored('ns/web')?.status?.stateChangeRequests).toEqual([{ action: 'Start' }]);
    expect(w.state.kvvm?.metadata.resourceVersion).toBe(w.kinds.kvvms.stored('ns/web')?.metadata.resourceVersion);
  });

  it('stops by deleting the instance (and not the internal VM)', async () => {
    const w = await execute({ kind: 'stop', why: 'test' }, { kvvm: kvvm('Manual'), kvvmi: kvvmi('Running') });
    expect(w.kinds.kvvmis.stored('ns/web')).toBeUndefined();
    expect(w.kinds.kvvms.calls).toEqual([]);
  });

  it('restarts with Stop of this instance uid then Start, and remembers the instance', async () => {
    const w = await execute({ kind: 'restart', why: 'test' }, { kvvm: kvvm('Manual'), kvvmi: kvvmi('Running', 'vmi-7') });
    expect(w.kinds.kvvms.stored('ns/web')?.status?.stateChangeRequests).toEqual([{ action: 'Stop', uid: 'vmi-7' }, { action: 'Start' }]);
    expect(w.restarts.get('ns/web')).toBe('vmi-7');
  });

  it('refuses a decision made on a stale copy with a conflict, sending nothing', async () => {
    const w = world({ kvvm: kvvm('Manual') });
    const state = initVMState(vm('Manual'));
    state.kvvm = w.deps.caches.kvvms.get('ns/web');
    w.kinds.kvvms.writeByOther('ns/web', { metadata: { annotations: { [START_REQUESTED]: '' } } }); // an operation wrote meanwhile
    state.power = { kind: 'start', why: 'test' };
    await expect(powerStateHandler(w.deps, w.restarts).handle(state, handlerContext())).rejects.toBeInstanceOf(ConflictError);
    expect(w.kinds.kvvms.stored('ns/web')?.status?.stateChangeRequests).toBeUndefined();
  });
});
