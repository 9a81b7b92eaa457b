/**
 * The VirtualMachineOperation reconciler on its own, over in-memory kinds: the operation's VM, the
 * internal VM and instance are seeded, KubeVirt's reactions are played by the test (an instance
 * appears, goes away). tests/integration/controller/vmop.test.ts runs it against the real apiserver.
 */
import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import { vm as vmOf, vmop as vmopOf } from '../../../../tests/integration/controller/builders.js';
import { inMemoryDeps } from '../../testing/in-memory.js';
import { RESTART_REQUESTED, START_REQUESTED } from '../vm/handlers/power-decision.js';
import { vmopReconciler } from './index.js';

const scope = { namespace: 'ns', id: 'unit' };
const signal = new AbortController().signal;
const FINALIZER = 'virtualization.deckhouse.io/vmop-cleanup';

const vm = (phase: string): VirtualMachine => ({ ...vmOf(scope, 'web', 'generic'), status: { phase } }) as VirtualMachine;
const kvvm = (runStrategy = 'Always'): InternalVirtualMachine =>
  ({
    apiVersion: 'internal.virtualization.deckhouse.io/v1',
    kind: 'InternalVirtualizationVirtualMachine',
    metadata: { namespace: 'ns', name: 'web' },
    spec: { runStrategy, template: {} },
  }) as unknown as InternalVirtualMachine;
const kvvmi = (phase = 'Running', uid = 'vmi-1'): InternalVirtualMachineInstance =>
  ({
    apiVersion: 'internal.virtualization.deckhouse.io/v1',
    kind: 'InternalVirtualizationVirtualMachineInstance',
    metadata: { namespace: 'ns', name: 'web', uid },
    spec: {},
    status: { phase },
  }) as unknown as InternalVirtualMachineInstance;
const op = (name: string, type: VirtualMachineOperation['spec']['type'], created = '2026-01-01T00:00:00Z'): VirtualMachineOperation => {
  const o = vmopOf(scope, name, 'web', type);
  return { ...o, metadata: { ...o.metadata, uid: `uid-${name}`, creationTimestamp: created } };
};

function world(
  seed: { vm?: VirtualMachine; kvvm?: InternalVirtualMachine; kvvmi?: InternalVirtualMachineInstance; ops: VirtualMachineOperation[] },
  env: Record<string, string> = {},
) {
  const { deps, kinds } = inMemoryDeps({
    env,
    seed: {
      vms: seed.vm ? [seed.vm] : [],
      kvvms: seed.kvvm ? [seed.kvvm] : [],
      kvvmis: seed.kvvmi ? [seed.kvvmi] : [],
      vmops: seed.ops,
    },
  });
  const reconcile = vmopReconciler(deps);
  return {
    kinds,
    reconcile: (name: string) => reconcile(`ns/${name}`, signal),
    op: (name: string) => kinds.vmops.stored(`ns/${name}`),
    completed: (name: string) => kinds.vmops.stored(`ns/${name}`)?.status?.conditions?.find((c) => c.type === 'Completed'),
  };
}

describe('the VirtualMachineOperation reconciler', () => {
  it.each<[string, Parameters<typeof world>[0], string, { phase: string; reason?: RegExp; message?: RegExp }]>([
    [
      'fails an operation whose VM does not exist',
      { ops: [op('a', 'Start')] },
      'a',
      { phase: 'Failed', reason: /VirtualMachineNotFound/, message: /VirtualMachine web not found/ },
    ],
    ['fails a Start of a running VM', { vm: vm('Running'), kvvm: kvvm(), kvvmi: kvvmi(), ops: [op('a', 'Start')] }, 'a', { phase: 'Failed' }],
    [
      'keeps a newer operation Pending behind an older unfinished one it may not supersede',
      { vm: vm('Stopped'), kvvm: kvvm(), ops: [op('old', 'Start', '2026-01-01T00:00:00Z'), op('new', 'Restart', '2026-01-01T00:00:01Z')] },
      'new',
      { phase: 'Pending', reason: /NotReadyToBeExecuted/, message: /waiting for operation old/ },
    ],
    [
      'waits (Pending, not failed) for a restart while the VM has no instance yet',
      { vm: vm('Starting'), kvvm: kvvm(), ops: [op('a', 'Restart')] },
      'a',
      { phase: 'Pending', reason: /NotReadyToBeExecuted/, message: /no instance to restart/ },
    ],
  ])('%s', async (_what, seed, name, want) => {
    const w = world(seed);
    await w.reconcile(name);
    expect(w.op(name)?.status?.phase).toBe(want.phase);
    if (want.reason) expect(w.completed(name)?.reason).toMatch(want.reason);
    if (want.message) expect(w.completed(name)?.message).toMatch(want.message);
  });

  it('starts a stopped VM: a start request on the internal VM, InProgress, then Completed once an instance runs, leaving nothing behind', async () => {
    const w = world({ vm: vm('Stopped'), kvvm: kvvm('Manual'), ops: [op('a', 'Start')] });
    await w.reconcile('a');
    expect(w.op('a')?.status?.phase).toBe('InProgress');
    expect(w.op('a')?.metadata.finalizers).toEqual([FINALIZER]);
    expect(w.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[START_REQUESTED]).toBe('uid-a');
    expect(w.completed('a')).toMatchObject({ status: 'False', reason: 'StartInProgress' });

    await w.kinds.kvvmis.create(kvvmi('Running')); // KubeVirt started it
    await w.reconcile('a');
    expect(w.op('a')?.status?.phase).toBe('Completed');
    expect(w.completed('a')).toMatchObject({ status: 'True', reason: 'OperationCompleted' });
    expect(w.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[START_REQUESTED]).toBeUndefined();
    await w.reconcile('a');
    expect(w.op('a')?.metadata.finalizers ?? []).toEqual([]);
  });

  it('stops a running VM: runStrategy Manual and the instance deleted, Completed once it is gone', async () => {
    const w = world({ vm: vm('Running'), kvvm: kvvm('Always'), kvvmi: kvvmi(), ops: [op('a', 'Stop')] });
    await w.reconcile('a');
    expect(w.kinds.kvvms.stored('ns/web')?.spec.runStrategy).toBe('Manual');
    expect(w.kinds.kvvmis.stored('ns/web')).toBeUndefined();
    // The instance had no finalizer here, so it went at once: the same pass sees it gone.
    expect(w.op('a')?.status?.phase).toBe('Completed');
  });

  it('restarts: asks for a restart of this instance, Completed only when a different instance runs', async () => {
    const w = world({ vm: vm('Running'), kvvm: kvvm(), kvvmi: kvvmi('Running', 'vmi-1'), ops: [op('a', 'Restart')] });
    await w.reconcile('a');
    expect(w.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[RESTART_REQUESTED]).toBe('vmi-1');
    await w.reconcile('a');
    expect(w.op('a')?.status?.phase).toBe('InProgress'); // the same instance still runs

    await w.kinds.kvvmis.delete({ namespace: 'ns', name: 'web' });
    await w.kinds.kvvmis.create(kvvmi('Running', 'vmi-2'));
    await w.reconcile('a');
    expect(w.op('a')?.status?.phase).toBe('Completed');
    expect(w.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[RESTART_REQUESTED]).toBeUndefined();
  });

  it('a deleted operation in progress takes its request back and goes', async () => {
    const w = world({ vm: vm('Stopped'), kvvm: kvvm('Manual'), ops: [op('a', 'Start')] });
    await w.reconcile('a');
    await w.kinds.vmops.delete({ namespace: 'ns', name: 'a' });
    expect(w.op('a')?.metadata.deletionTimestamp).toBeDefined(); // held by its finalizer
    await w.reconcile('a');
    expect(w.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[START_REQUESTED]).toBeUndefined();
    expect(w.op('a')).toBeUndefined();
  });

  it('leaves Restore and Clone to the snapshot reconcilers, and fails them when those are off', async () => {
    const restore = {
      ...op('r', 'Restore'),
      spec: { ...op('r', 'Restore').spec, restore: { mode: 'Strict', virtualMachineSnapshotName: 's' } },
    } as VirtualMachineOperation;
    const on = world({ vm: vm('Stopped'), kvvm: kvvm('Manual'), ops: [restore] });
    await on.reconcile('r');
    expect(on.kinds.vmops.calls).toEqual([]);
    const off = world({ vm: vm('Stopped'), kvvm: kvvm('Manual'), ops: [restore] }, { STORAGE_RECONCILERS: 'false' });
    await off.reconcile('r');
    expect(off.op('r')?.status?.phase).toBe('Failed');
    expect(off.completed('r')).toMatchObject({ reason: 'OperationFailed', message: expect.stringMatching(/STORAGE_RECONCILERS=false/) });
  });

  it('leaves a finished operation alone (no write at all)', async () => {
    const done = { ...op('a', 'Start'), status: { phase: 'Completed' } } as VirtualMachineOperation;
    const w = world({ vm: vm('Running'), kvvm: kvvm(), ops: [done] });
    await w.reconcile('a');
    expect(w.kinds.vmops.calls).toEqual([]);
  });

  it('a Stop supersedes an older Start in progress: its start request withdrawn, Superseded, and the Stop runs', async () => {
    const w = world({ vm: vm('Stopped'), kvvm: kvvm('Manual'), ops: [op('old', 'Start', '2026-01-01T00:00:00Z')] });
    await w.reconcile('old');
    expect(w.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[START_REQUESTED]).toBe('uid-old');
    await w.kinds.vmops.create(op('new', 'Stop', '2026-01-01T00:00:01Z'));
    await w.reconcile('new');
    expect(w.op('old')?.status?.phase).toBe('Superseded');
    expect(w.completed('old')).toMatchObject({ status: 'False', reason: 'Superseded', message: 'Superseded by new with type Stop' });
    expect(w.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[START_REQUESTED]).toBeUndefined();
    expect(w.op('new')?.status?.phase).not.toBe('Pending');
    await w.reconcile('old'); // a superseded operation lets go of its finalizer
    expect(w.op('old')?.metadata.finalizers ?? []).toEqual([]);
  });

  it('withdraws the older Start’s request even when the cached internal VM is a version behind (KubeVirt wrote it meanwhile)', async () => {
    const w = world({ vm: vm('Stopped'), kvvm: kvvm('Manual'), ops: [op('old', 'Start', '2026-01-01T00:00:00Z')] });
    await w.reconcile('old');
    w.kinds.kvvms.writeByOther('ns/web', { status: { printableStatus: 'Starting' } }, { unseen: true });
    await w.kinds.vmops.create(op('new', 'Stop', '2026-01-01T00:00:01Z'));
    await w.reconcile('new');
    expect(w.op('old')?.status?.phase).toBe('Superseded');
    // Once Superseded the older operation is final: nothing would withdraw its request later, and the
    // VM would start again after the Stop.
    expect(w.kinds.kvvms.stored('ns/web')?.metadata.annotations?.[START_REQUESTED]).toBeUndefined();
  });

  it('superseding an operation that already completed: nothing happens to it', async () => {
    const done = { ...op('old', 'Start', '2026-01-01T00:00:00Z'), status: { phase: 'Completed' } } as VirtualMachineOperation;
    const w = world({ vm: vm('Running'), kvvm: kvvm(), kvvmi: kvvmi(), ops: [done, op('new', 'Stop', '2026-01-01T00:00:01Z')] });
    await w.reconcile('new');
    expect(w.op('old')?.status).toEqual({ phase: 'Completed' });
    expect(w.kinds.vmops.calls.filter((c) => c.key === 'ns/old')).toEqual([]);
  });
});
