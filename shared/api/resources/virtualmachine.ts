/** VirtualMachine (vm): a virtual machine, its configuration and observed state. */
import type { z } from 'zod';
import { AGE_COLUMN, conditionColumn, type ResourceDefinition } from '../k8s/crd.js';
import { API_VERSION, rootSchema, publicNames } from './common.js';
import { VirtualMachineSpecSchema } from './virtualmachine-spec.js';
import { VirtualMachineStatusSchema } from './virtualmachine-status.js';

export const VirtualMachineSchema = rootSchema(API_VERSION, 'VirtualMachine', VirtualMachineSpecSchema, VirtualMachineStatusSchema);
export type VirtualMachine = z.infer<typeof VirtualMachineSchema>;

export const virtualMachine: ResourceDefinition<typeof VirtualMachineSchema> = {
  ...publicNames('VirtualMachine', 'virtualmachines', 'Namespaced', ['vm'], ['virtualization', 'all']),
  description: 'A virtual machine: its CPU, memory, disks, networks, placement and power policy.',
  schema: VirtualMachineSchema,
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Uptime', type: 'date', jsonPath: '.status.stats.lastStartTime' },
    { name: 'Cores', type: 'integer', jsonPath: '.status.resources.cpu.cores', priority: 1 },
    { name: 'CoreFraction', type: 'string', jsonPath: '.status.resources.cpu.coreFraction', priority: 1 },
    { name: 'Memory', type: 'string', jsonPath: '.status.resources.memory.size', priority: 1 },
    conditionColumn('Need restart', 'AwaitingRestartToApplyConfiguration', 1),
    conditionColumn('Agent', 'AgentReady', 1),
    conditionColumn('Migratable', 'Migratable', 1),
    { name: 'Node', type: 'string', jsonPath: '.status.nodeName' },
    { name: 'IPAddress', type: 'string', jsonPath: '.status.ipAddress' },
    AGE_COLUMN,
  ],
};
