import { DEFAULT_CLASS_ANNOTATION, type VirtualMachineClass } from '../../../../../shared/api/resources/virtualmachineclass.js';
import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import type { Deps } from '../../../deps.js';
import type { Handler, HandlerContext } from '../../../engine/reconciler.js';
import { sizingPolicyFor } from '../kvvm/cpu.js';
import { condition, type VMState } from '../state.js';

const C = VMCondition.ClassReady;
const S = VMCondition.SizingPolicyMatched;

/** Resolves the class (the spec's, else the single default class) and states VirtualMachineClassReady. */
export function classHandler(deps: Deps): Handler<VMState> {
  return {
    name: 'class',
    handle(s, ctx): void {
      const name = s.obj.spec.virtualMachineClassName || defaultClassName(deps.caches.classes.list());
      const vmClass = name === undefined ? undefined : deps.caches.classes.get(name);
      const notReady = (message: string): void => {
        condition(s, ctx, { type: C.type, status: 'False', reason: C.reason.VirtualMachineClassNotReady, message });
        s.waitingFor.push(message);
      };
      if (s.obj.metadata.deletionTimestamp === undefined) sizing(s, ctx, name ?? '', vmClass);
      if (name === undefined) return notReady('no VirtualMachineClass is named and there is no single default class');
      if (vmClass === undefined) return notReady(`VirtualMachineClass ${name} not found`);
      if (vmClass.status?.phase !== 'Ready') return notReady(`VirtualMachineClass ${name} is not ready (phase ${vmClass.status?.phase ?? 'unknown'})`);
      condition(s, ctx, { type: C.type, status: 'True', reason: C.reason.VirtualMachineClassReady });
      s.vmClass = vmClass;
    },
  };
}

/** SizingPolicyMatched, as the original states it on every VM: its class missing, terminating, matched or not. */
function sizing(s: VMState, ctx: HandlerContext, name: string, vmClass: VirtualMachineClass | undefined): void {
  const no = (reason: string, message: string): void => condition(s, ctx, { type: S.type, status: 'False', reason, message });
  if (vmClass === undefined) return no(S.reason.VirtualMachineClassNotFound, `VirtualMachineClass "${name}" not found.`);
  if (vmClass.status?.phase === 'Terminating') return no(S.reason.VirtualMachineClassTerminating, `Virtual machine class "${name}" is terminating.`);
  const policies = vmClass.spec.sizingPolicies ?? [];
  if (policies.length === 0 || sizingPolicyFor(vmClass, s.obj.spec.cpu.cores) !== undefined) {
    return condition(s, ctx, { type: S.type, status: 'True', reason: S.reason.SizingPolicyMatched });
  }
  no(S.reason.SizingPolicyNotMatched, `Size policy matching errors: no sizing policy of VirtualMachineClass ${name} covers ${s.obj.spec.cpu.cores} cores.`);
}

/** The name of the class annotated as default, when exactly one is. */
export function defaultClassName(classes: readonly VirtualMachineClass[]): string | undefined {
  const defaults = classes.filter((c) => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true');
  return defaults.length === 1 ? defaults[0]?.metadata.name : undefined;
}
