/**
 * Sizing policies of a VirtualMachineClass: which policy covers a core count, whether cores, memory and
 * core fraction fit it, and the default core fraction it gives. Shared by validation and defaulting.
 */
import type { FieldProblem } from '../../../shared/errors/index.js';
import type { VirtualMachineClass } from '../../../shared/api/resources/virtualmachineclass.js';
import { formatBytes, parseQuantity } from '../../../shared/api/k8s/quantity.js';

export type SizingPolicy = NonNullable<VirtualMachineClass['spec']['sizingPolicies']>[number];

export interface Sizing {
  readonly cores: number;
  readonly memory: string | number;
  /** "50%", "Auto" or undefined. */
  readonly coreFraction: string | undefined;
}

/** The first policy whose core range holds `cores`. */
export function policyFor(cls: VirtualMachineClass, cores: number): SizingPolicy | undefined {
  return cls.spec.sizingPolicies?.find((p) => cores >= p.cores.min && cores <= p.cores.max);
}

/** "50%" -> 50; anything else (Auto, garbage) -> undefined. */
export function percent(fraction: string | undefined): number | undefined {
  const m = /^(\d{1,3})%$/.exec(fraction ?? '');
  return m === null ? undefined : Number(m[1]);
}

/** Where a VM's size breaks its class's sizing policy; paths are relative to the VM spec. */
export function sizingProblems(cls: VirtualMachineClass, size: Sizing): FieldProblem[] {
  const policies = cls.spec.sizingPolicies ?? [];
  if (policies.length === 0) return [];
  const name = cls.metadata.name ?? '';
  const policy = policyFor(cls, size.cores);
  if (policy === undefined) {
    const ranges = policies.map((p) => `${p.cores.min}-${p.cores.max}`).join(', ');
    return [{ path: 'cpu.cores', message: `no sizing policy of VirtualMachineClass ${name} covers ${size.cores} cores (ranges: ${ranges})` }];
  }
  return [...coreProblems(policy, size.cores), ...memoryProblems(policy, size), ...fractionProblems(policy, size.coreFraction)];
}

function coreProblems(policy: SizingPolicy, cores: number): FieldProblem[] {
  const { min, step } = policy.cores;
  if (step === undefined || (cores - min) % step === 0) return [];
  return [{ path: 'cpu.cores', message: `must be ${min} plus a multiple of ${step} in the sizing policy for ${min}-${policy.cores.max} cores` }];
}

function memoryProblems(policy: SizingPolicy, size: Sizing): FieldProblem[] {
  const memory = parseQuantity(size.memory);
  const limits = policy.memory;
  if (memory === undefined || limits === undefined) return [];
  const range = `the sizing policy for ${policy.cores.min}-${policy.cores.max} cores`;
  const problems: FieldProblem[] = [];
  const min = parseQuantity(limits.min);
  const max = parseQuantity(limits.max);
  const step = parseQuantity(limits.step);
  if (min !== undefined && memory < min) problems.push({ path: 'memory.size', message: `must be at least ${formatBytes(min)} in ${range}` });
  if (max !== undefined && memory > max) problems.push({ path: 'memory.size', message: `must be at most ${formatBytes(max)} in ${range}` });
  if (step !== undefined && step > 0 && (memory - (min ?? 0)) % step !== 0) {
    problems.push({ path: 'memory.size', message: `must be ${formatBytes(min ?? 0)} plus a multiple of ${formatBytes(step)} in ${range}` });
  }
  const perCore = memory / size.cores;
  const perMin = parseQuantity(limits.perCore?.min);
  const perMax = parseQuantity(limits.perCore?.max);
  if (perMin !== undefined && perCore < perMin) problems.push({ path: 'memory.size', message: `must be at least ${formatBytes(perMin)} per core in ${range}` });
  if (perMax !== undefined && perCore > perMax) problems.push({ path: 'memory.size', message: `must be at most ${formatBytes(perMax)} per core in ${range}` });
  return problems;
}

function fractionProblems(policy: SizingPolicy, coreFraction: string | undefined): FieldProblem[] {
  const allowed = policy.coreFractions;
  const value = percent(coreFraction);
  if (allowed === undefined || allowed.length === 0 || value === undefined || allowed.includes(value)) return [];
  const list = allowed.map((f) => `${f}%`).join(', ');
  return [{ path: 'cpu.coreFraction', message: `must be one of ${list} in the sizing policy for ${policy.cores.min}-${policy.cores.max} cores` }];
}

export type DefaultFraction = { ok: true; value: string } | { ok: false; message: string };

/** The core fraction a VM without one gets: the policy's default, else 100% when the policy allows it. */
export function defaultCoreFraction(policy: SizingPolicy | undefined): DefaultFraction {
  const d = policy?.defaultCoreFraction;
  if (d !== undefined) return { ok: true, value: typeof d === 'number' ? `${d}%` : d };
  const allowed = policy?.coreFractions ?? [];
  if (allowed.length > 0 && !allowed.includes(100)) {
    return {
      ok: false,
      message: `the sizing policy for ${policy?.cores.min}-${policy?.cores.max} cores has no defaultCoreFraction and does not allow 100%; set spec.cpu.coreFraction`,
    };
  }
  return { ok: true, value: '100%' };
}

/** Core fractions below 100% that a policy allows (Auto needs at least two). */
export function fractionsBelowFull(policy: SizingPolicy | undefined): number[] {
  return (policy?.coreFractions ?? []).filter((f) => f < 100);
}
