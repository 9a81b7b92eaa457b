import { describe, expect, it } from '@jest/globals';
import { Finalizer } from '../../../../shared/api/finalizers.js';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import type { ResourcePort } from '../../../../shared/kube/index.js';
import { EVACUATION_ANNOTATION, evacuationBackoff, evacuationReconciler, type EvacuationDeps } from './reconciler.js';

const KEY = 'ns/web';
const PROTECTION = Finalizer.vmopProtectionByEvacuationController;

const vm = (over: { required?: boolean; phase?: string } = {}): VirtualMachine =>
  ({
    apiVersion: 'virtualization.deckhouse.io/v1alpha2',
    kind: 'VirtualMachine',
    metadata: { name: 'web', namespace: 'ns' },
    spec: {},
    status: {
      phase: over.phase ?? 'Running',
      conditions: over.required === false ? [] : [{ type: 'EvictionRequired', status: 'True', reason: 'EvictionRequired', message: '' }],
    },
  }) as unknown as VirtualMachine;

const vmi = (marked: string | undefined): InternalVirtualMachineInstance =>
  ({
    metadata: { name: 'web', namespace: 'ns' },
    spec: { domain: {} },
    status: marked === undefined ? {} : { evacuationNodeName: marked },
  }) as InternalVirtualMachineInstance;

const NOW = Date.parse('2026-12-07T00:00:00Z');
const at = (msBeforeNow: number): string => new Date(NOW - msBeforeNow).toISOString();

const op = (
  name: string,
  phase: string | undefined,
  extra: { deleting?: boolean; evacuation?: boolean; type?: string; finishedMsAgo?: number } = {},
): VirtualMachineOperation =>
  ({
    apiVersion: 'virtualization.deckhouse.io/v1alpha2',
    kind: 'VirtualMachineOperation',
    metadata: {
      name,
      namespace: 'ns',
      finalizers: [PROTECTION],
      ...(extra.evacuation === false ? {} : { annotations: { [EVACUATION_ANNOTATION]: 'true' } }),
      ...(extra.deleting === true ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { type: extra.type ?? 'Evict', virtualMachineName: 'web' },
    ...(phase === undefined
      ? {}
      : {
          status: {
            phase,
            ...(extra.finishedMsAgo === undefined
              ? {}
              : { conditions: [{ type: 'Completed', status: 'False', reason: 'OperationFailed', message: '', lastTransitionTime: at(extra.finishedMsAgo) }] }),
          },
        }),
  }) as VirtualMachineOperation;

function harness(state: { vm?: VirtualMachine; vmi?: InternalVirtualMachineInstance; ops: VirtualMachineOperation[] }) {
  const created: VirtualMachineOperation[] = [];
  const patched: string[] = [];
  const unmarked: string[] = [];
  const vmopClient = {
    create: (o: VirtualMachineOperation) => {
      created.push(o);
      return Promise.resolve({ ...o, metadata: { ...o.metadata, name: 'evacuation-abcde' } });
    },
    jsonPatch: (ref: { name: string }) => {
      patched.push(ref.name);
      const found = state.ops.find((o) => o.metadata.name === ref.name);
      return Promise.resolve({ ...found, metadata: { ...found?.metadata, finalizers: [] } });
    },
    get: (ref: { name: string }) => Promise.resolve(state.ops.find((o) => o.metadata.name === ref.name)),
  } as unknown as ResourcePort<VirtualMachineOperation>;
  const deps: EvacuationDeps = {
    vms: { get: () => state.vm },
    vmops: { byIndex: () => state.ops, remember: (o) => o },
    kvvmis: { get: () => state.vmi, remember: (o) => o },
    vmopClient,
    kvvmiClient: {
      jsonPatch: (ref) => {
        unmarked.push(ref.name);
        return Promise.resolve(vmi(undefined));
      },
    },
  };
  return { run: () => evacuationReconciler({ ...deps, now: () => NOW })(KEY, new AbortController().signal), created, patched, unmarked };
}

describe('the evacuation reconciler', () => {
  it("creates one Evict operation, named and marked as the original's, for a VM marked for evacuation", async () => {
    const h = harness({ vm: vm(), vmi: vmi('node-1'), ops: [] });
    await h.run();
    expect(h.created).toHaveLength(1);
    expect(h.created[0]).toMatchObject({
      metadata: { generateName: 'evacuation-', namespace: 'ns', annotations: { [EVACUATION_ANNOTATION]: 'true' }, finalizers: [PROTECTION] },
      spec: { type: 'Evict', virtualMachineName: 'web' },
    });
  });

  it.each([
    ['a Migrate or Evict of the VM is unfinished', { vm: vm(), vmi: vmi('node-1'), ops: [op('evacuation-1', 'InProgress')] }],
    ['the VM is migrating', { vm: vm({ phase: 'Migrating' }), vmi: vmi('node-1'), ops: [] }],
    ['the VM does not ask for it', { vm: vm({ required: false }), vmi: vmi('node-1'), ops: [] }],
    ["the VM's condition lags behind an instance no longer marked", { vm: vm(), vmi: vmi(undefined), ops: [] }],
  ])('creates nothing while %s', async (_, state) => {
    const h = harness(state);
    await h.run();
    expect(h.created).toHaveLength(0);
  });

  it('releases finished migration operations (and only those) of its finalizer', async () => {
    const h = harness({
      vm: vm({ required: false }),
      vmi: vmi(undefined),
      ops: [op('done', 'Completed'), op('mig', 'Failed', { type: 'Migrate' }), op('run', 'InProgress')],
    });
    await h.run();
    expect(h.patched.sort()).toEqual(['done', 'mig']);
  });

  it('cancels the evacuation when its operation is deleted before it finished, then lets it go', async () => {
    const h = harness({ vm: vm(), vmi: vmi('node-1'), ops: [op('evacuation-1', 'Terminating', { deleting: true })] });
    await h.run();
    expect(h.unmarked).toEqual(['web']);
    expect(h.patched).toEqual(['evacuation-1']);
    expect(h.created).toHaveLength(0);
  });

  it('releases the operations of a VM that is gone and cancels nothing', async () => {
    const h = harness({ ops: [op('evacuation-1', 'Pending')] });
    await h.run();
    expect(h.patched).toEqual(['evacuation-1']);
    expect(h.unmarked).toEqual([]);
  });

  it('after a failed evacuation operation waits 2 s from its failure before the next one, instead of making one at once', async () => {
    const failed = op('evacuation-1', 'Failed', { finishedMsAgo: 500 });
    const h = harness({ vm: vm(), vmi: vmi('node-1'), ops: [failed] });
    expect(await h.run()).toEqual({ requeueAfterMs: 1_500 });
    expect(h.created).toHaveLength(0);
    // Its finalizer still goes: the operation is finished.
    expect(h.patched).toEqual(['evacuation-1']);
    const later = harness({ vm: vm(), vmi: vmi('node-1'), ops: [op('evacuation-1', 'Failed', { finishedMsAgo: 2_000 })] });
    await later.run();
    expect(later.created).toHaveLength(1);
  });

  it.each([
    [
      'no failed evacuation operation',
      [op('evacuation-1', 'Completed', { finishedMsAgo: 0 }), op('m', 'Failed', { evacuation: false, type: 'Migrate', finishedMsAgo: 0 })],
      0,
    ],
    ['one failure just now', [op('e1', 'Failed', { finishedMsAgo: 0 })], 2_000],
    [
      'three failures, the last 1 s ago',
      [op('e1', 'Failed', { finishedMsAgo: 60_000 }), op('e2', 'Failed', { finishedMsAgo: 30_000 }), op('e3', 'Failed', { finishedMsAgo: 1_000 })],
      7_000,
    ],
    ['ten failures (capped at 5 min)', Array.from({ length: 10 }, (_, i) => op(`e${i}`, 'Failed', { finishedMsAgo: 0 })), 300_000],
    ['a failure without conditions (its creation counts)', [op('e1', 'Failed')], 0],
  ])('spaces evacuation operations after failures: %s', (_, ops, wait) => {
    expect(evacuationBackoff(ops, NOW)).toBe(wait);
  });
});
