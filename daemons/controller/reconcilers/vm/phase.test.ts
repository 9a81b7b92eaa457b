import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { phaseOf, type PhaseInput } from './phase.js';

const kvvm = (printableStatus?: string): InternalVirtualMachine =>
  ({ metadata: { name: 'vm' }, spec: { template: { spec: { domain: {} } } }, status: printableStatus ? { printableStatus } : {} }) as InternalVirtualMachine;
const vmi = (phase: string, extra: Partial<NonNullable<InternalVirtualMachineInstance['status']>> = {}, deleting = false): InternalVirtualMachineInstance =>
  ({
    metadata: { name: 'vm', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: { domain: {} },
    status: { phase, ...extra },
  }) as InternalVirtualMachineInstance;

const base: PhaseInput = { deleting: false, kvvm: kvvm(), kvvmi: undefined, startPending: false };

describe('phaseOf', () => {
  it.each<[string, Partial<PhaseInput>, string]>([
    ['a deleting VM is Terminating', { deleting: true }, 'Terminating'],
    ['no internal VM yet is Pending', { kvvm: undefined }, 'Pending'],
    ['no instance is Stopped', {}, 'Stopped'],
    ['no instance with a start due is Pending', { startPending: true }, 'Pending'],
    ['an unschedulable start is Pending', { kvvm: kvvm('ErrorUnschedulable'), kvvmi: vmi('Pending') }, 'Pending'],
    ['a missing PVC is Pending', { kvvm: kvvm('ErrorPvcNotFound'), kvvmi: vmi('Pending') }, 'Pending'],
    ['a state KubeVirt cannot tell is Pending', { kvvm: kvvm('Unknown'), kvvmi: vmi('Unknown') }, 'Pending'],
    ['an image pull problem is Pending', { kvvm: kvvm('ErrImagePull'), kvvmi: vmi('Scheduling') }, 'Pending'],
    ['a scheduled instance is Starting', { kvvmi: vmi('Scheduled') }, 'Starting'],
    [
      'an instance whose launcher pod KubeVirt could not create is Pending',
      { kvvmi: vmi('Pending', { conditions: [{ type: 'Synchronized', status: 'False', reason: 'FailedCreate' }] }) },
      'Pending',
    ],
    [
      'an instance the node cannot start is Starting',
      { kvvmi: vmi('Scheduled', { conditions: [{ type: 'Synchronized', status: 'False', reason: 'InsufficientHostMemory' }] }) },
      'Starting',
    ],
    ['a running instance is Running', { kvvmi: vmi('Running') }, 'Running'],
    ['a paused instance is Pause', { kvvmi: vmi('Running', { conditions: [{ type: 'Paused', status: 'True' }] }) }, 'Pause'],
    ['a migrating instance is Migrating', { kvvmi: vmi('Running', { migrationState: { startTimestamp: '2026-01-01T00:00:00Z' } }) }, 'Migrating'],
    [
      'a finished migration is Running again',
      { kvvmi: vmi('Running', { migrationState: { startTimestamp: '2026-01-01T00:00:00Z', completed: true } }) },
      'Running',
    ],
    ['an instance being deleted is Stopping', { kvvmi: vmi('Running', {}, true) }, 'Stopping'],
    ['a guest that shut down is Stopped', { kvvmi: vmi('Succeeded') }, 'Stopped'],
    ['a failed instance is Stopped', { kvvmi: vmi('Failed') }, 'Stopped'],
  ])('%s', (_what, input, phase) => {
    expect(phaseOf({ ...base, ...input })).toBe(phase);
  });
});
