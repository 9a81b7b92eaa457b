/** VirtualMachine CPU and memory: topology limits, the class sizing policy, and Auto core fraction. */
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../../../shared/api/resources/virtualmachineclass.js';
import { joinPath, type Findings } from '../../decision.js';
import { fractionsBelowFull, policyFor, sizingProblems } from '../../lib/sizing.js';
import type { RuleContext } from '../../lookups.js';
import { pure, type Check } from '../check.js';

export const MAX_CORES = 248;
export const IN_PLACE_RESIZE_GATE = 'HotplugCPUAndMemoryWithInPlaceResize';

/** Sockets the VM gets for its core count (1 up to 16 cores, 2 up to 32, 4 up to 64, then 8). */
export function socketsFor(cores: number): number {
  if (cores <= 16) return 1;
  if (cores <= 32) return 2;
  if (cores <= 64) return 4;
  return 8;
}

export const coreTopology: Check<VirtualMachine> = pure('the core count fits the CPU topology', ({ object }, out) => {
  const cores = object.spec.cpu.cores;
  if (cores > MAX_CORES) {
    out.deny('spec.cpu.cores', `must be at most ${MAX_CORES}`);
    return;
  }
  const sockets = socketsFor(cores);
  if (cores % sockets !== 0) {
    out.deny('spec.cpu.cores', `must be a multiple of ${sockets}: a VM with ${cores} cores has ${sockets} sockets of equal size`);
  }
});

export const sizingPolicy: Check<VirtualMachine> = {
  name: 'cores, memory and core fraction match the class sizing policy',
  run: async ({ object }, { lookups }, out) => {
    const className = object.spec.virtualMachineClassName;
    const cls = await lookups.virtualMachineClass(className);
    if (cls === undefined) {
      out.warn(`VirtualMachineClass ${className} does not exist yet; the sizing policy is checked once it does`, 'spec.virtualMachineClassName');
      return;
    }
    const spec = object.spec;
    for (const p of sizingProblems(cls, { cores: spec.cpu.cores, memory: spec.memory.size, coreFraction: spec.cpu.coreFraction })) {
      out.deny(joinPath('spec', p.path), p.message);
    }
  },
};

export const autoCoreFraction: Check<VirtualMachine> = {
  name: 'core fraction Auto is available',
  run: async ({ object }, ctx, out) => {
    if (object.spec.cpu.coreFraction !== 'Auto') return;
    await autoFractionProblems(ctx, out, 'spec.cpu.coreFraction');
    const cls = await ctx.lookups.virtualMachineClass(object.spec.virtualMachineClassName);
    if (cls !== undefined) autoNeedsFractions(cls, object.spec.cpu.cores, out);
  },
};

/** Auto needs a non-CE edition, the VPA API and the in-place resize feature gate (VMs and classes alike). */
export async function autoFractionProblems(ctx: RuleContext, out: Findings, path: string): Promise<void> {
  if (ctx.cluster.edition === 'CE') out.deny(path, 'Auto is not available in the CE edition');
  const [vpa, settings] = await Promise.all([ctx.lookups.apiAvailable('autoscaling.k8s.io', 'v1', 'verticalpodautoscalers'), ctx.lookups.moduleSettings()]);
  if (!vpa) out.deny(path, 'Auto needs the vertical-pod-autoscaler module, which is not enabled');
  if (!settings.featureGates.includes(IN_PLACE_RESIZE_GATE)) {
    out.deny(path, `Auto needs the ${IN_PLACE_RESIZE_GATE} feature gate in the virtualization ModuleConfig`);
  }
}

function autoNeedsFractions(cls: VirtualMachineClass, cores: number, out: Findings): void {
  const below = fractionsBelowFull(policyFor(cls, cores));
  if (below.length >= 2) return;
  out.deny(
    'spec.cpu.coreFraction',
    `Auto needs a sizing policy of VirtualMachineClass ${cls.metadata.name ?? ''} for ${cores} cores with at least two core fractions below 100%`,
  );
}
