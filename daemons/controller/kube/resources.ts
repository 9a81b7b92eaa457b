/** The typed clients of every resource the controller reads or writes. */
import { z } from 'zod';
import type { ResourceDefinition } from '../../../shared/api/k8s/crd.js';
import { ObjectMetaSchema } from '../../../shared/api/k8s/core.js';
import { USBIP_PORT_ANNOTATIONS } from '../../../shared/api/usbip.js';
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
import {
  VirtualMachineIPAddressLeaseSchema,
  VirtualMachineIPAddressSchema,
  virtualMachineIPAddress,
  virtualMachineIPAddressLease,
  type VirtualMachineIPAddress,
  type VirtualMachineIPAddressLease,
} from '../../../shared/api/resources/addresses.js';
import { VirtualDiskSchema, virtualDisk, type VirtualDisk } from '../../../shared/api/resources/virtualdisk.js';
import {
  ClusterVirtualImageSchema,
  VirtualImageSchema,
  clusterVirtualImage,
  virtualImage,
  type ClusterVirtualImage,
  type VirtualImage,
} from '../../../shared/api/resources/virtualimage.js';
import { VirtualMachineSchema, virtualMachine, type VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { VirtualMachineClassSchema, virtualMachineClass, type VirtualMachineClass } from '../../../shared/api/resources/virtualmachineclass.js';
import { VirtualMachineOperationSchema, virtualMachineOperation, type VirtualMachineOperation } from '../../../shared/api/resources/vmop.js';
import { descriptorOf, withoutManagedFields, type KubeClient, type ResourceClient, type ResourceDescriptor } from '../../../shared/kube/index.js';
import { ModuleConfigSchema, moduleConfigDescriptor, type ModuleConfig } from '../../../shared/kube/module-config-cidrs.js';

export const FIELD_MANAGER = 'virtualization-controller';
/** The `reportingController` of the controller's events. */
export const REPORTING_CONTROLLER = 'virtualization-controller';

const taintSchema = z.looseObject({ key: z.string(), value: z.string().optional(), effect: z.string() });

/** The parts of a Node the class reconciler reads. */
export const NodeSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({ taints: z.array(taintSchema).optional(), unschedulable: z.boolean().optional() }).optional(),
  status: z.looseObject({ allocatable: z.record(z.string(), z.string()).optional() }).optional(),
});
export type Node = z.infer<typeof NodeSchema>;
export type Taint = z.infer<typeof taintSchema>;

/**
 * What the node cache keeps of a Node: the fields NodeSchema names (identity, labels, taints,
 * unschedulable, allocatable), not its images, conditions, annotations, addresses or managedFields,
 * which make up most of a real node and change with every kubelet heartbeat.
 */
export function nodeView(node: Node): Node {
  const m = node.metadata;
  return defined({
    apiVersion: node.apiVersion,
    kind: node.kind,
    metadata: defined({
      name: m.name,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      generation: m.generation,
      creationTimestamp: m.creationTimestamp,
      deletionTimestamp: m.deletionTimestamp,
      labels: m.labels,
      annotations: usbipAnnotations(m.annotations),
    }),
    spec: node.spec === undefined ? undefined : defined({ taints: node.spec.taints, unschedulable: node.spec.unschedulable }),
    status: node.status === undefined ? undefined : defined({ allocatable: node.status.allocatable }),
  });
}

/**
 * What the launcher-pod cache keeps of a pod: the fields PodSchema names, which are what the VM
 * reconciler reads (the metadata without managedFields, the node, the phase, why the pod is not
 * running or not scheduled, its conditions, its containers' waiting and termination); not the
 * containers, volumes, affinity and statuses KubeVirt and the kubelet write, which made the launcher
 * pods the largest of the controller's caches (13 of the 30 KB it held per VM, in a heap snapshot at
 * 1,000 VMs). Pods are only ever merge-patched from this view, never replaced.
 */
export function launcherPodView(pod: Pod): Pod {
  const { spec, status } = pod;
  const terminated = (t: { message?: string | undefined; reason?: string | undefined } | undefined) =>
    t === undefined ? undefined : defined({ message: t.message, reason: t.reason });
  return defined({
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: withoutManagedFields(pod).metadata,
    spec: spec === undefined ? undefined : defined({ nodeName: spec.nodeName }),
    status:
      status === undefined
        ? undefined
        : defined({
            phase: status.phase,
            reason: status.reason,
            message: status.message,
            conditions: status.conditions?.map((c) => defined({ type: c.type, status: c.status, reason: c.reason, message: c.message })),
            containerStatuses: status.containerStatuses?.map((c) =>
              defined({
                name: c.name,
                state:
                  c.state === undefined
                    ? undefined
                    : defined({
                        terminated: terminated(c.state.terminated),
                        waiting: c.state.waiting === undefined ? undefined : defined({ reason: c.state.waiting.reason }),
                      }),
                lastState: c.lastState === undefined ? undefined : defined({ terminated: terminated(c.lastState.terminated) }),
              }),
            ),
          }),
  });
}

/** The USB/IP gateway's port annotations of a node (the VMs' USB devices of other nodes read them), undefined when it has none. */
function usbipAnnotations(annotations: Readonly<Record<string, string>> | undefined): Record<string, string> | undefined {
  const kept = Object.entries(annotations ?? {}).filter(([k]) => USBIP_PORT_ANNOTATIONS.has(k));
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

/** The object without its undefined keys (so a trimmed copy has no keys the original lacked). */
function defined<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

const containerStatusSchema = z.looseObject({
  name: z.string(),
  state: z
    .looseObject({
      terminated: z.looseObject({ message: z.string().optional(), reason: z.string().optional() }).optional(),
      waiting: z.looseObject({ reason: z.string().optional() }).optional(),
    })
    .optional(),
  lastState: z.looseObject({ terminated: z.looseObject({ message: z.string().optional(), reason: z.string().optional() }).optional() }).optional(),
});

/** The parts of a virt-launcher Pod the VM reconciler reads: its node, phase, why it is not running or not scheduled, its containers' waiting and the compute container's termination. */
export const PodSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({ nodeName: z.string().optional() }).optional(),
  status: z
    .looseObject({
      phase: z.string().optional(),
      reason: z.string().optional(),
      message: z.string().optional(),
      conditions: z.array(z.looseObject({ type: z.string(), status: z.string(), reason: z.string().optional(), message: z.string().optional() })).optional(),
      containerStatuses: z.array(containerStatusSchema).optional(),
    })
    .optional(),
});
export type Pod = z.infer<typeof PodSchema>;

/** A core/v1 Event, as far as the VM reconciler reads one about a launcher pod (its reason and when it last happened). */
export const CoreEventSchema = z.looseObject({
  metadata: ObjectMetaSchema,
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTimestamp: z.string().nullish(),
  eventTime: z.string().nullish(),
  firstTimestamp: z.string().nullish(),
});
export type CoreEvent = z.infer<typeof CoreEventSchema>;

/** A Secret, as far as provisioning checks it. */
export const SecretSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  type: z.string().optional(),
  data: z.record(z.string(), z.string()).optional(),
});
export type Secret = z.infer<typeof SecretSchema>;

const core = (plural: string, kind: string, namespaced: boolean): ResourceDescriptor => ({ group: '', version: 'v1', plural, kind, namespaced });

/** Core events (read only: the kubelet's about launcher pods). */
export function coreEvents(kube: KubeClient): ResourceClient<CoreEvent> {
  return kube.resource(core('events', 'Event', true), CoreEventSchema, FIELD_MANAGER);
}

export interface Clients {
  vms: ResourceClient<VirtualMachine>;
  classes: ResourceClient<VirtualMachineClass>;
  disks: ResourceClient<VirtualDisk>;
  images: ResourceClient<VirtualImage>;
  clusterImages: ResourceClient<ClusterVirtualImage>;
  kvvms: ResourceClient<InternalVirtualMachine>;
  kvvmis: ResourceClient<InternalVirtualMachineInstance>;
  migrations: ResourceClient<InternalVirtualMachineInstanceMigration>;
  vmops: ResourceClient<VirtualMachineOperation>;
  vmips: ResourceClient<VirtualMachineIPAddress>;
  leases: ResourceClient<VirtualMachineIPAddressLease>;
  nodes: ResourceClient<Node>;
  pods: ResourceClient<Pod>;
  secrets: ResourceClient<Secret>;
  moduleConfigs: ResourceClient<ModuleConfig>;
}

/** Every client, attributed to the controller's field manager. */
export function makeClients(kube: KubeClient, fieldManager = FIELD_MANAGER): Clients {
  const r = <T extends { metadata: z.infer<typeof ObjectMetaSchema> }>(def: ResourceDefinition, schema: z.ZodType<T>): ResourceClient<T> =>
    kube.resource(descriptorOf(def), schema, fieldManager);
  return {
    vms: r(virtualMachine, VirtualMachineSchema),
    classes: r(virtualMachineClass, VirtualMachineClassSchema),
    disks: r(virtualDisk, VirtualDiskSchema),
    images: r(virtualImage, VirtualImageSchema),
    clusterImages: r(clusterVirtualImage, ClusterVirtualImageSchema),
    kvvms: r(internalVirtualMachine, InternalVirtualMachineSchema),
    kvvmis: r(internalVirtualMachineInstance, InternalVirtualMachineInstanceSchema),
    migrations: r(internalVirtualMachineInstanceMigration, InternalVirtualMachineInstanceMigrationSchema),
    vmops: r(virtualMachineOperation, VirtualMachineOperationSchema),
    vmips: r(virtualMachineIPAddress, VirtualMachineIPAddressSchema),
    leases: r(virtualMachineIPAddressLease, VirtualMachineIPAddressLeaseSchema),
    nodes: kube.resource(core('nodes', 'Node', false), NodeSchema, fieldManager),
    pods: kube.resource(core('pods', 'Pod', true), PodSchema, fieldManager),
    secrets: kube.resource(core('secrets', 'Secret', true), SecretSchema, fieldManager),
    moduleConfigs: kube.resource(moduleConfigDescriptor, ModuleConfigSchema, fieldManager),
  };
}
