import { describe, expect, it } from '@jest/globals';
import { applicability, type ApplicabilityInput } from './applicability.js';

const base: ApplicabilityInput = { type: 'Start', force: undefined, phase: 'Stopped', runPolicy: 'Manual', liveMigrationPolicy: 'PreferSafe' };

describe('which operation applies to which VM', () => {
  it.each<[string, Partial<ApplicabilityInput>, string]>([
    ['Start a stopped Manual VM', {}, 'ok'],
    ['Start a stopping VM', { phase: 'Stopping' }, 'ok'],
    ['Start a running VM', { phase: 'Running' }, 'NotApplicableForVirtualMachinePhase'],
    ['Start an AlwaysOn VM', { runPolicy: 'AlwaysOn' }, 'NotApplicableForVirtualMachineRunPolicy'],
    ['Start an AlwaysOff VM', { runPolicy: 'AlwaysOff' }, 'NotApplicableForVirtualMachineRunPolicy'],
    ['Stop a running AOUSM VM', { type: 'Stop', phase: 'Running', runPolicy: 'AlwaysOnUnlessStoppedManually' }, 'ok'],
    ['Stop a pending VM', { type: 'Stop', phase: 'Pending' }, 'ok'],
    ['Stop an AlwaysOn VM', { type: 'Stop', phase: 'Running', runPolicy: 'AlwaysOn' }, 'NotApplicableForVirtualMachineRunPolicy'],
    ['Stop a stopping VM', { type: 'Stop', phase: 'Stopping' }, 'NotApplicableForVirtualMachinePhase'],
    ['Stop a stopping VM by force', { type: 'Stop', phase: 'Stopping', force: true }, 'ok'],
    ['Stop a stopped VM', { type: 'Stop', phase: 'Stopped' }, 'NotApplicableForVirtualMachinePhase'],
    ['Restart a running AlwaysOn VM', { type: 'Restart', phase: 'Running', runPolicy: 'AlwaysOn' }, 'ok'],
    ['Restart a stopped VM', { type: 'Restart', phase: 'Stopped' }, 'NotApplicableForVirtualMachinePhase'],
    ['Restart an AlwaysOff VM', { type: 'Restart', phase: 'Running', runPolicy: 'AlwaysOff' }, 'NotApplicableForVirtualMachineRunPolicy'],
    ['Migrate a running VM', { type: 'Migrate', phase: 'Running', runPolicy: 'AlwaysOn' }, 'ok'],
    ['Evict a stopped VM', { type: 'Evict', phase: 'Stopped' }, 'NotApplicableForVirtualMachinePhase'],
    [
      'Migrate by force under AlwaysSafe',
      { type: 'Migrate', phase: 'Running', force: true, liveMigrationPolicy: 'AlwaysSafe' },
      'NotApplicableForLiveMigrationPolicy',
    ],
    [
      'Migrate unforced under AlwaysForced',
      { type: 'Migrate', phase: 'Running', force: false, liveMigrationPolicy: 'AlwaysForced' },
      'NotApplicableForLiveMigrationPolicy',
    ],
    ['Migrate by force under PreferSafe', { type: 'Migrate', phase: 'Running', force: true }, 'ok'],
    ['Restore of a running VM', { type: 'Restore', phase: 'Running' }, 'NotApplicableForVirtualMachinePhase'],
    ['Clone of a running VM', { type: 'Clone', phase: 'Running' }, 'NotApplicableForVirtualMachinePhase'],
  ])('%s: %s', (_what, input, verdict) => {
    const result = applicability({ ...base, ...input });
    expect(result.ok ? 'ok' : result.reason).toBe(verdict);
  });
});
