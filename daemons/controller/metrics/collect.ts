import { Registry } from '../../../shared/metrics/index.js';
import type { Caches } from '../deps.js';
import { isTrue } from '../engine/conditions.js';
import { parseQuantity } from '../../../shared/api/k8s/quantity.js';
import { effectiveCoreFraction } from '../reconcilers/vm/kvvm/cpu.js';

const NS = 'd8_virtualization_';
const VM_PHASES = ['Pending', 'Running', 'Degraded', 'Terminating', 'Stopped', 'Stopping', 'Starting', 'Migrating', 'Pause'] as const;
const CLASS_PHASES = ['Pending', 'Ready', 'Terminating'] as const;
const VMOP_PHASES = ['Pending', 'InProgress', 'Completed', 'Failed', 'Terminating', 'Superseded'] as const;
const RUN_POLICIES = ['AlwaysOn', 'AlwaysOff', 'Manual', 'AlwaysOnUnlessStoppedManually'] as const;

type VMLabel = 'name' | 'namespace' | 'uid' | 'node';

/**
 * The resource gauges of the original (`d8_virtualization_*`), computed from the caches at scrape time
 * into a fresh registry, so objects that are gone leave no stale series.
 */
export async function collectResourceMetrics(caches: Caches): Promise<string> {
  const registry = new Registry();
  collectVMs(registry, caches);
  collectClasses(registry, caches);
  collectOperations(registry, caches);
  return await registry.expose();
}

function collectVMs(registry: Registry, caches: Caches): void {
  const base: VMLabel[] = ['name', 'namespace', 'uid', 'node'];
  const phase = registry.gauge({ name: `${NS}virtualmachine_status_phase`, help: 'The VM phase (1 for the current one).', labelNames: [...base, 'phase'] });
  const cores = registry.gauge({ name: `${NS}virtualmachine_configuration_cpu_cores`, help: 'Configured CPU cores.', labelNames: base });
  const fraction = registry.gauge({
    name: `${NS}virtualmachine_configuration_cpu_core_fraction`,
    help: 'Configured core fraction, percent.',
    labelNames: base,
  });
  const memory = registry.gauge({ name: `${NS}virtualmachine_configuration_memory_size_bytes`, help: 'Configured memory, bytes.', labelNames: base });
  const awaiting = registry.gauge({
    name: `${NS}virtualmachine_awaiting_restart_to_apply_configuration`,
    help: '1 when changes wait for a restart.',
    labelNames: base,
  });
  const applied = registry.gauge({ name: `${NS}virtualmachine_configuration_applied`, help: '1 when the configuration is applied.', labelNames: base });
  const policy = registry.gauge({
    name: `${NS}virtualmachine_configuration_run_policy`,
    help: 'The runPolicy (1 for the current one).',
    labelNames: [...base, 'runPolicy'],
  });
  const info = registry.gauge({ name: `${NS}virtualmachine_info`, help: 'Static VM information.', labelNames: [...base, 'virtualmachineclass'] });
  for (const vm of caches.vms.list()) {
    const l = { name: vm.metadata.name ?? '', namespace: vm.metadata.namespace ?? '', uid: vm.metadata.uid ?? '', node: vm.status?.nodeName ?? '' };
    for (const p of VM_PHASES) phase.set({ ...l, phase: p }, vm.status?.phase === p ? 1 : 0);
    for (const p of RUN_POLICIES) policy.set({ ...l, runPolicy: p }, vm.spec.runPolicy === p ? 1 : 0);
    cores.set(l, vm.spec.cpu.cores);
    fraction.set(l, effectiveCoreFraction(vm, caches.classes.get(vm.spec.virtualMachineClassName)));
    memory.set(l, parseQuantity(vm.spec.memory.size) ?? 0);
    awaiting.set(l, isTrue(vm.status?.conditions, 'AwaitingRestartToApplyConfiguration') ? 1 : 0);
    applied.set(l, isTrue(vm.status?.conditions, 'ConfigurationApplied') ? 1 : 0);
    info.set({ ...l, virtualmachineclass: vm.spec.virtualMachineClassName }, 1);
  }
}

function collectClasses(registry: Registry, caches: Caches): void {
  const phase = registry.gauge({
    name: `${NS}virtualmachineclass_status_phase`,
    help: 'The class phase (1 for the current one).',
    labelNames: ['name', 'uid', 'phase'],
  });
  const node = registry.gauge({
    name: `${NS}virtualmachineclass_available_node`,
    help: 'Nodes where VMs of the class can run.',
    labelNames: ['name', 'uid', 'node'],
  });
  for (const cls of caches.classes.list()) {
    const l = { name: cls.metadata.name ?? '', uid: cls.metadata.uid ?? '' };
    for (const p of CLASS_PHASES) phase.set({ ...l, phase: p }, cls.status?.phase === p ? 1 : 0);
    for (const n of cls.status?.availableNodes ?? []) node.set({ ...l, node: n }, 1);
  }
}

function collectOperations(registry: Registry, caches: Caches): void {
  const labels = ['name', 'namespace', 'uid', 'type', 'virtualmachine'] as const;
  const phase = registry.gauge({
    name: `${NS}virtualmachineoperation_status_phase`,
    help: 'The operation phase (1 for the current one).',
    labelNames: [...labels, 'phase'],
  });
  for (const op of caches.vmops.list()) {
    const l = {
      name: op.metadata.name ?? '',
      namespace: op.metadata.namespace ?? '',
      uid: op.metadata.uid ?? '',
      type: op.spec.type,
      virtualmachine: op.spec.virtualMachineName,
    };
    for (const p of VMOP_PHASES) phase.set({ ...l, phase: p }, op.status?.phase === p ? 1 : 0);
  }
}
