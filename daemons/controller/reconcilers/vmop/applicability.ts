/** Whether an operation may run on a VM in its phase and under its runPolicy (pure). */

export type OperationType = 'Restart' | 'Start' | 'Stop' | 'Migrate' | 'Evict' | 'Restore' | 'Clone';

export interface ApplicabilityInput {
  type: OperationType;
  force: boolean | undefined;
  phase: string | undefined;
  runPolicy: string;
  liveMigrationPolicy: string;
}

export type Applicability =
  | { ok: true }
  | {
      ok: false;
      reason: 'NotApplicableForVirtualMachinePhase' | 'NotApplicableForVirtualMachineRunPolicy' | 'NotApplicableForLiveMigrationPolicy' | 'OperationFailed';
      message: string;
    };

interface Rule {
  phases: readonly string[];
  /** Extra phases allowed only with force. */
  forcedPhases?: readonly string[];
  policies: readonly string[];
}

const RULES: Partial<Record<OperationType, Rule>> = {
  Start: { phases: ['Stopped', 'Stopping'], policies: ['Manual', 'AlwaysOnUnlessStoppedManually'] },
  Stop: {
    phases: ['Running', 'Degraded', 'Starting', 'Pause', 'Pending'],
    forcedPhases: ['Stopping'],
    policies: ['Manual', 'AlwaysOnUnlessStoppedManually'],
  },
  Restart: {
    phases: ['Running', 'Degraded', 'Starting', 'Pause'],
    forcedPhases: ['Stopping'],
    policies: ['Manual', 'AlwaysOnUnlessStoppedManually', 'AlwaysOn'],
  },
  Migrate: { phases: ['Running'], policies: ['Manual', 'AlwaysOnUnlessStoppedManually', 'AlwaysOn'] },
  Evict: { phases: ['Running'], policies: ['Manual', 'AlwaysOnUnlessStoppedManually', 'AlwaysOn'] },
  // A stopped VM only: its disks are consistent without freezing the guest (not built here).
  Restore: { phases: ['Stopped'], policies: ['Manual', 'AlwaysOnUnlessStoppedManually', 'AlwaysOn', 'AlwaysOff'] },
  Clone: { phases: ['Stopped'], policies: ['Manual', 'AlwaysOnUnlessStoppedManually', 'AlwaysOn', 'AlwaysOff'] },
};

export function applicability(input: ApplicabilityInput): Applicability {
  const rule = RULES[input.type];
  if (rule === undefined) return { ok: false, reason: 'OperationFailed', message: `operation ${input.type} is not supported by this controller` };
  if (!rule.policies.includes(input.runPolicy)) {
    return {
      ok: false,
      reason: 'NotApplicableForVirtualMachineRunPolicy',
      message: `${input.type} is not applicable to a VM with runPolicy ${input.runPolicy}`,
    };
  }
  const phases = input.force === true ? [...rule.phases, ...(rule.forcedPhases ?? [])] : rule.phases;
  if (!phases.includes(input.phase ?? '')) {
    return {
      ok: false,
      reason: 'NotApplicableForVirtualMachinePhase',
      message: `${input.type} is not applicable to a VM in phase ${input.phase ?? 'unknown'}`,
    };
  }
  return migrationPolicy(input);
}

/** AlwaysSafe refuses a forced migration, AlwaysForced one that is explicitly not forced. */
function migrationPolicy(input: ApplicabilityInput): Applicability {
  if (input.type !== 'Migrate' && input.type !== 'Evict') return { ok: true };
  if (input.liveMigrationPolicy === 'AlwaysSafe' && input.force === true) {
    return { ok: false, reason: 'NotApplicableForLiveMigrationPolicy', message: 'liveMigrationPolicy AlwaysSafe forbids a forced migration' };
  }
  if (input.liveMigrationPolicy === 'AlwaysForced' && input.force === false) {
    return { ok: false, reason: 'NotApplicableForLiveMigrationPolicy', message: 'liveMigrationPolicy AlwaysForced forbids an unforced migration' };
  }
  return { ok: true };
}
