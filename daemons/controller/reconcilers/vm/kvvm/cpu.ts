import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../../../../shared/api/resources/virtualmachineclass.js';
import { formatCpu } from '../../../../../shared/api/k8s/quantity.js';

export interface CpuTopology {
  sockets: number;
  coresPerSocket: number;
}

/**
 * Sockets for a core count: 1 up to 16 cores, 2 up to 32, 4 up to 64, else 8. When the cores do not
 * divide evenly, fewer sockets are used so the guest sees exactly the requested cores.
 */
export function topologyOf(cores: number): CpuTopology {
  let sockets = cores <= 16 ? 1 : cores <= 32 ? 2 : cores <= 64 ? 4 : 8;
  while (sockets > 1 && cores % sockets !== 0) sockets--;
  return { sockets, coresPerSocket: cores / sockets };
}

/** A percentage string (`50%`) or int percentage as a number, or undefined for Auto/unknown. */
export function percentOf(value: string | number | undefined): number | undefined {
  if (typeof value === 'number') return value;
  const m = /^(\d{1,3})%$/.exec(value ?? '');
  return m === null ? undefined : Number(m[1]);
}

/** The sizing policy of the class that covers this core count. */
export function sizingPolicyFor(
  vmClass: VirtualMachineClass | undefined,
  cores: number,
): NonNullable<VirtualMachineClass['spec']['sizingPolicies']>[number] | undefined {
  return vmClass?.spec.sizingPolicies?.find((p) => cores >= p.cores.min && cores <= p.cores.max);
}

/**
 * The core fraction in effect, in percent: the VM's own, else the class policy's default, else 100.
 * Auto uses the recommendation in the VM status when there is one, else 100 (a full core).
 */
export function effectiveCoreFraction(vm: VirtualMachine, vmClass: VirtualMachineClass | undefined): number {
  const own = vm.spec.cpu.coreFraction;
  const fromPolicy = sizingPolicyFor(vmClass, vm.spec.cpu.cores)?.defaultCoreFraction;
  const chosen = own ?? fromPolicy;
  if (chosen === 'Auto') return percentOf(vm.status?.recommendedResources?.cpu?.coreFraction) ?? 100;
  return percentOf(chosen) ?? 100;
}

/** CPU requested from the node: cores times the fraction (`2` cores at 50% → `1`). */
export function requestedCpu(cores: number, fractionPercent: number): string {
  return formatCpu((cores * fractionPercent) / 100);
}

export interface CpuModel {
  model: string;
  features?: { name: string; policy: string }[];
}

/** The guest CPU model from the class CPU type. */
export function cpuModelOf(vmClass: VirtualMachineClass): CpuModel {
  const cpu = vmClass.spec.cpu;
  switch (cpu.type) {
    case 'Host':
      return { model: 'host-model' };
    case 'HostPassthrough':
      return { model: 'host-passthrough' };
    case 'Model':
      return { model: cpu.model ?? 'host-model' };
    case 'Discovery':
    case 'Features': {
      const required = vmClass.status?.cpuFeatures?.enabled ?? cpu.features ?? [];
      const features = required.map((name) => ({ name, policy: 'require' }));
      if (!required.includes('invtsc')) features.push({ name: 'invtsc', policy: 'optional' });
      if (!required.includes('svm')) features.push({ name: 'svm', policy: 'optional' });
      return { model: 'qemu64', features };
    }
  }
}
