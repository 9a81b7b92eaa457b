/** The clients of the simulator: KubeVirt's internal objects (shared/api) and the launcher pods. */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../shared/api/k8s/core.js';
import { nodeDescriptor, podDescriptor } from '../../../shared/api/k8s/resource.js';
import { AgentNodeSchema, type AgentNode } from './virt-handler/node.js';
import { PVCSchema, PVSchema, pvcDescriptor, pvDescriptor, type PV, type PVC } from '../storage-simulator/kube.js';
import {
  InternalVirtualMachineInstanceMigrationSchema,
  InternalVirtualMachineInstanceSchema,
  InternalVirtualMachineSchema,
  internalVirtualMachine,
  internalVirtualMachineInstance,
  internalVirtualMachineInstanceMigration,
  type InternalVirtualMachine,
  type InternalVirtualMachineInstance,
  type InternalVirtualMachineInstanceMigration,
} from '../../../shared/api/internal/resources.js';
import { descriptorOf, type KubeClient, type ResourceClient } from '../../../shared/kube/index.js';

export const FIELD_MANAGER = 'kubevirt-simulator';

const conditionSchema = z.looseObject({ type: z.string(), status: z.string(), reason: z.string().optional(), message: z.string().optional() });
const terminatedSchema = z.looseObject({ exitCode: z.number().optional(), reason: z.string().optional(), message: z.string().optional() });

/** A virt-launcher Pod as far as the simulator reads it; the rest is kept as written. */
export const LauncherPodSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({ nodeName: z.string().optional(), containers: z.array(z.looseObject({ name: z.string() })) }).optional(),
  status: z
    .looseObject({
      phase: z.string().optional(),
      podIP: z.string().optional(),
      conditions: z.array(conditionSchema).optional(),
      containerStatuses: z.array(z.looseObject({ name: z.string(), state: z.looseObject({ terminated: terminatedSchema.optional() }).optional() })).optional(),
    })
    .optional(),
});
export type LauncherPod = z.infer<typeof LauncherPodSchema>;

export interface SimulatorClients {
  kvvms: ResourceClient<InternalVirtualMachine>;
  kvvmis: ResourceClient<InternalVirtualMachineInstance>;
  migrations: ResourceClient<InternalVirtualMachineInstanceMigration>;
  pods: ResourceClient<LauncherPod>;
  nodes: ResourceClient<AgentNode>;
  /** Read by the guest firmware: a disk's claim and its volume. */
  pvcs: ResourceClient<PVC>;
  pvs: ResourceClient<PV>;
}

export function simulatorClients(kube: KubeClient): SimulatorClients {
  return {
    kvvms: kube.resource(descriptorOf(internalVirtualMachine), InternalVirtualMachineSchema, FIELD_MANAGER),
    kvvmis: kube.resource(descriptorOf(internalVirtualMachineInstance), InternalVirtualMachineInstanceSchema, FIELD_MANAGER),
    migrations: kube.resource(descriptorOf(internalVirtualMachineInstanceMigration), InternalVirtualMachineInstanceMigrationSchema, FIELD_MANAGER),
    pods: kube.resource(podDescriptor, LauncherPodSchema, FIELD_MANAGER),
    nodes: kube.resource(nodeDescriptor, AgentNodeSchema, FIELD_MANAGER),
    pvcs: kube.resource(pvcDescriptor, PVCSchema, FIELD_MANAGER),
    pvs: kube.resource(pvDescriptor, PVSchema, FIELD_MANAGER),
  };
}
