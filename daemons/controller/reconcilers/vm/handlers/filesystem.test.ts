/** FilesystemFrozen from the instance's fsFreezeStatus, shown only while the agent is ready. */
import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import { handlerContext } from '../../../testing/in-memory.js';
import { initVMState } from '../index.js';
import type { VMState } from '../state.js';
import { FILESYSTEM_FROZEN_MESSAGE, filesystemHandler } from './filesystem.js';

const vmi = (fsFreezeStatus?: string): InternalVirtualMachineInstance =>
  ({
    metadata: { namespace: 'ns', name: 'web', uid: 'vmi-1' },
    spec: {},
    status: { phase: 'Running', ...(fsFreezeStatus === undefined ? {} : { fsFreezeStatus }) },
  }) as unknown as InternalVirtualMachineInstance;

function run(instance: InternalVirtualMachineInstance | undefined, agent: 'True' | 'False' | undefined, before?: 'frozen'): VMState {
  const state = initVMState(vmOf({ namespace: 'ns', id: 'unit' }, 'web', 'generic'));
  state.status.conditions = [
    ...(agent === undefined ? [] : [{ type: 'AgentReady', status: agent, reason: 'x', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }]),
    ...(before === undefined
      ? []
      : [{ type: 'FilesystemFrozen', status: 'True' as const, reason: 'Frozen', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }]),
  ];
  state.kvvmi = instance;
  void filesystemHandler().handle(state, handlerContext());
  return state;
}
const frozen = (s: VMState) => s.status.conditions?.find((c) => c.type === 'FilesystemFrozen');

describe('the VM filesystem handler', () => {
  it('shows FilesystemFrozen True, reason Frozen, with the original’s message while the instance reports frozen and the agent is ready', () => {
    expect(frozen(run(vmi('frozen'), 'True'))).toMatchObject({ status: 'True', reason: 'Frozen', message: FILESYSTEM_FROZEN_MESSAGE });
  });

  it.each<[string, InternalVirtualMachineInstance | undefined, 'True' | 'False' | undefined]>([
    ['thawed', vmi(), 'True'],
    ['an fsFreezeStatus other than frozen', vmi('thawed'), 'True'],
    ['an agent that is not ready', vmi('frozen'), 'False'],
    ['no AgentReady condition', vmi('frozen'), undefined],
    ['no instance', undefined, 'True'],
  ])('drops the condition with %s', (_what, instance, agent) => {
    expect(frozen(run(instance, agent, 'frozen'))).toBeUndefined();
  });
});
