import { describe, expect, it } from '@jest/globals';
import { DEFAULT_CLASS_ANNOTATION, type VirtualMachineClass } from '../../../../../shared/api/resources/virtualmachineclass.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import { handlerContext, inMemoryDeps } from '../../../testing/in-memory.js';
import { initVMState } from '../index.js';
import { classHandler, defaultClassName } from './class.js';

const cls = (name: string, isDefault?: string, extra: Partial<VirtualMachineClass> = {}): VirtualMachineClass =>
  ({
    metadata: { name, ...(isDefault !== undefined ? { annotations: { [DEFAULT_CLASS_ANNOTATION]: isDefault } } : {}) },
    spec: { cpu: { type: 'Host' } },
    ...extra,
  }) as VirtualMachineClass;
const ready = (name: string, isDefault?: string, spec: Partial<VirtualMachineClass['spec']> = {}): VirtualMachineClass =>
  cls(name, isDefault, { spec: { cpu: { type: 'Host' }, ...spec }, status: { phase: 'Ready' } });
const policies = { sizingPolicies: [{ cores: { min: 1, max: 4 } }] } as Partial<VirtualMachineClass['spec']>;

describe('the default class', () => {
  it.each<[string, VirtualMachineClass[], string | undefined]>([
    ['the one annotated is-default-class=true', [cls('a'), cls('generic', 'true')], 'generic'],
    ['none when no class is annotated', [cls('a'), cls('b', 'false')], undefined],
    ['none when two classes claim it', [cls('a', 'true'), cls('b', 'true')], undefined],
  ])('is %s', (_what, classes, expected) => {
    expect(defaultClassName(classes)).toBe(expected);
  });
});

interface Row {
  what: string;
  className: string;
  cores?: number;
  classes: VirtualMachineClass[];
  ready: { status: string; reason: string; message?: RegExp };
  sizing?: { status: string; reason: string; message?: RegExp } | 'none';
  resolved?: string;
}

/** A VM of `cores` cores with a Ready class whose sizing policy covers 1 to 4 cores. */
function sizedRow(what: string, cores: number, sizing: Row['sizing']): Row {
  return {
    what,
    className: 'sized',
    cores,
    classes: [ready('sized', undefined, policies)],
    ready: { status: 'True', reason: 'VirtualMachineClassReady' },
    sizing,
    resolved: 'sized',
  };
}

describe('the VM class handler', () => {
  it.each<Row>([
    {
      what: 'waits when no class is named and none is the single default',
      className: '',
      classes: [ready('a'), ready('b')],
      ready: { status: 'False', reason: 'VirtualMachineClassNotReady', message: /no VirtualMachineClass is named/ },
    },
    {
      what: 'takes the default class when the spec names none',
      className: '',
      classes: [ready('a'), ready('generic', 'true')],
      ready: { status: 'True', reason: 'VirtualMachineClassReady' },
      resolved: 'generic',
    },
    {
      what: 'waits for a class that does not exist',
      className: 'gone',
      classes: [ready('generic', 'true')],
      ready: { status: 'False', reason: 'VirtualMachineClassNotReady', message: /VirtualMachineClass gone not found/ },
      sizing: { status: 'False', reason: 'VirtualMachineClassNotFound', message: /VirtualMachineClass "gone" not found/ },
    },
    {
      what: 'waits for a class that is not Ready',
      className: 'slow',
      classes: [cls('slow', undefined, { status: { phase: 'Pending' } })],
      ready: { status: 'False', reason: 'VirtualMachineClassNotReady', message: /is not ready \(phase Pending\)/ },
      sizing: { status: 'True', reason: 'SizingPolicyMatched' },
    },
    {
      what: 'says a terminating class cannot size the VM',
      className: 'leaving',
      classes: [cls('leaving', undefined, { status: { phase: 'Terminating' } })],
      ready: { status: 'False', reason: 'VirtualMachineClassNotReady', message: /phase Terminating/ },
      sizing: { status: 'False', reason: 'VirtualMachineClassTerminating', message: /"leaving" is terminating/ },
    },
    {
      what: 'uses the named Ready class',
      className: 'generic',
      classes: [ready('generic')],
      ready: { status: 'True', reason: 'VirtualMachineClassReady' },
      sizing: { status: 'True', reason: 'SizingPolicyMatched' },
      resolved: 'generic',
    },
    sizedRow('says the sizing policy matches when one covers the cores', 2, { status: 'True', reason: 'SizingPolicyMatched' }),
    sizedRow('says no sizing policy covers the cores (and still uses the class)', 8, {
      status: 'False',
      reason: 'SizingPolicyNotMatched',
      message: /covers 8 cores/,
    }),
  ])('$what', async (row) => {
    const { deps } = inMemoryDeps({ seed: { classes: row.classes } });
    const vm: VirtualMachine = vmOf({ namespace: 'ns', id: 'unit' }, 'web', row.className, { cpu: { cores: row.cores ?? 2, coreFraction: '100%' } });
    const state = initVMState(vm);
    // A stale SizingPolicyMatched from an earlier pass.
    state.status.conditions = [
      { type: 'SizingPolicyMatched', status: 'False', reason: 'SizingPolicyNotMatched', message: 'old', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ];

    await classHandler(deps).handle(state, handlerContext());

    const cond = (type: string) => state.status.conditions?.find((c) => c.type === type);
    const { message, ...readyRest } = row.ready;
    expect(cond('VirtualMachineClassReady')).toMatchObject(readyRest);
    if (message) expect(cond('VirtualMachineClassReady')?.message).toMatch(message);
    expect(state.vmClass?.metadata.name).toBe(row.resolved);
    if (row.resolved === undefined) expect(state.waitingFor.join('\n')).toMatch(message ?? /./);
    else expect(state.waitingFor).toEqual([]);
    if (row.sizing === 'none') expect(cond('SizingPolicyMatched')).toBeUndefined();
    else if (row.sizing !== undefined) {
      const { message: m, ...rest } = row.sizing;
      expect(cond('SizingPolicyMatched')).toMatchObject(rest);
      if (m) expect(cond('SizingPolicyMatched')?.message).toMatch(m);
    }
  });
});
