import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import type { InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { Deps } from '../../../deps.js';
import type { Handler, HandlerContext, HandlerOutcome } from '../../../engine/reconciler.js';
import { rfc3339 } from '../../../engine/conditions.js';
import { effectiveCoreFraction, requestedCpu, topologyOf } from '../kvvm/cpu.js';
import { phaseOf, type VMPhase } from '../phase.js';
import { condition, type VMState, type VMStatus } from '../state.js';

const Running = VMCondition.Running;
/** How many phase transitions status.stats keeps. */
const MAX_TRANSITIONS = 10;

/**
 * The observed state: phase (and its history), node, Running condition, resources, networks, migration.
 * A VM still waiting for a dependency is looked at again later (not every dependency is watched).
 */
export function lifecycleHandler(deps: Deps): Handler<VMState> {
  return {
    name: 'lifecycle',
    handle(s, ctx): HandlerOutcome | void {
      const vm = s.obj;
      const vmi = s.kvvmi;
      const phase = phaseOf({ deleting: vm.metadata.deletionTimestamp !== undefined, kvvm: s.kvvm, kvvmi: vmi, startPending: s.startPending });
      recordPhase(s, phase, ctx);
      const node = vmi?.status?.nodeName;
      if (vmi !== undefined && node !== undefined && node !== '' && phase !== 'Pending') s.status.nodeName = node;
      else delete s.status.nodeName;
      runningCondition(s, ctx, phase);
      s.status.resources = resourcesOf(s);
      if (s.ipAddress !== undefined) s.status.networks = [{ type: 'Main', ipAddress: s.ipAddress }];
      else delete s.status.networks;
      const migration = migrationStateOf(vmi);
      if (migration !== undefined) s.status.migrationState = migration;
      if (vm.metadata.generation !== undefined) s.status.observedGeneration = vm.metadata.generation;
      if (s.waitingFor.length > 0) return { requeueAfterMs: deps.config.DEPENDENCY_RECHECK_INTERVAL };
    },
  };
}

function recordPhase(s: VMState, phase: VMPhase, ctx: HandlerContext): void {
  if (s.status.phase === phase) return;
  s.status.phase = phase;
  const stats = s.status.stats ?? {};
  const timestamp = rfc3339(ctx.now);
  stats.phasesTransitions = [...(stats.phasesTransitions ?? []), { phase, timestamp }].slice(-MAX_TRANSITIONS);
  if (phase === 'Running') stats.lastStartTime = timestamp;
  s.status.stats = stats;
}

function runningCondition(s: VMState, ctx: HandlerContext, phase: VMPhase): void {
  if (phase === 'Running' || phase === 'Migrating' || phase === 'Pause') {
    condition(s, ctx, { type: Running.type, status: 'True', reason: Running.reason.Running });
    return;
  }
  const message =
    s.kvvm === undefined && s.waitingFor.length > 0
      ? `waiting for: ${s.waitingFor.join('; ')}`
      : s.kvvmi?.status?.phase === 'Failed'
        ? 'the guest failed'
        : `the virtual machine is ${phase.toLowerCase()}`;
  const reason = s.kvvmi?.status?.phase === 'Failed' ? Running.reason.InternalVirtualMachineError : Running.reason.NotRunning;
  condition(s, ctx, { type: Running.type, status: 'False', reason, message });
}

function resourcesOf(s: VMState): VMStatus['resources'] {
  const { cores } = s.obj.spec.cpu;
  const fraction = effectiveCoreFraction(s.obj, s.vmClass);
  const topology = topologyOf(cores);
  return {
    cpu: {
      cores,
      coreFraction: `${fraction}%`,
      requestedCores: requestedCpu(cores, fraction),
      topology: { sockets: topology.sockets, coresPerSocket: topology.coresPerSocket },
    },
    memory: { size: s.obj.spec.memory.size },
  };
}

function migrationStateOf(vmi: InternalVirtualMachineInstance | undefined): VMStatus['migrationState'] {
  const m = vmi?.status?.migrationState;
  if (m === undefined || m.startTimestamp == null) return undefined;
  const result = m.failed === true ? 'Failed' : m.completed === true ? 'Succeeded' : '';
  return {
    startTimestamp: m.startTimestamp,
    ...(m.endTimestamp != null ? { endTimestamp: m.endTimestamp } : {}),
    source: { node: m.sourceNode, pod: m.sourcePod },
    target: { node: m.targetNode, pod: m.targetPod },
    result,
  };
}
