/**
 * virt-handler's part on its node, for the node agent beside a real virt-controller, whose launcher
 * pods ask for it: the node labeller's labels (the node is schedulable for KubeVirt, the CPU models
 * and machine types it can run, the host's CPU model, vendor and features), the device plugins' resources (`devices.kubevirt.io/kvm`, `tun`,
 * `vhost-net`) and the heartbeat annotation virt-controller's node controller reads (a node without a
 * fresh one is marked unschedulable and its pod-less instances failed). Names as they are stored,
 * through the api-rewriter (`kubevirt.io/schedulable` → `kubevirt.internal.virtualization.deckhouse.io/schedulable`, …).
 */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../../shared/api/k8s/core.js';
import type { ResourceClient } from '../../../../shared/kube/index.js';
import { now } from '../context.js';

const KUBEVIRT = 'kubevirt.internal.virtualization.deckhouse.io';
export const SCHEDULABLE_LABEL = `${KUBEVIRT}/schedulable`;
export const HEARTBEAT_ANNOTATION = `${KUBEVIRT}/heartbeat`;
export const CPU_MODEL_LABEL_PREFIX = 'cpu-model.node.virtualization.deckhouse.io/';
export const CPU_FEATURE_LABEL_PREFIX = 'cpu-feature.node.virtualization.deckhouse.io/';
export const HOST_MODEL_LABEL_PREFIX = 'host-model-cpu.node.virtualization.deckhouse.io/';
export const HOST_MODEL_FEATURE_LABEL_PREFIX = 'host-model-required-features.node.virtualization.deckhouse.io/';
export const CPU_VENDOR_LABEL_PREFIX = 'cpu-vendor.node.virtualization.deckhouse.io/';
export const MACHINE_TYPE_LABEL_PREFIX = 'machine-type.node.virtualization.deckhouse.io/';
/** What a simulated node offers through KubeVirt's device plugins (per resource: guests at once). */
export const DEVICE_RESOURCES = ['devices.kubevirt.io/kvm', 'devices.kubevirt.io/tun', 'devices.kubevirt.io/vhost-net'];
const DEVICES_PER_NODE = '110';

export const AgentNodeSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  status: z.looseObject({ capacity: z.record(z.string(), z.string()).optional(), allocatable: z.record(z.string(), z.string()).optional() }).optional(),
});
export type AgentNode = z.infer<typeof AgentNodeSchema>;

export interface NodeOffer {
  /** CPU models the node can run (the node labeller's `cpu-model` labels). */
  cpuModels: readonly string[];
  /** Machine types it can emulate. */
  machineTypes: readonly string[];
  /** CPU features of the host (the node labeller's `cpu-feature` labels, which a Discovery class intersects). */
  cpuFeatures?: readonly string[];
  /** The host's own CPU model and vendor (`host-model-cpu`, `cpu-vendor` labels). */
  hostModel?: string;
  vendor?: string;
}

/** The labels virt-handler's node labeller puts on a node that offers `offer`. */
export function nodeLabels(offer: NodeOffer): Record<string, string> {
  const labels: Record<string, string> = { [SCHEDULABLE_LABEL]: 'true' };
  for (const m of offer.cpuModels) labels[`${CPU_MODEL_LABEL_PREFIX}${m}`] = 'true';
  for (const t of offer.machineTypes) labels[`${MACHINE_TYPE_LABEL_PREFIX}${t}`] = 'true';
  for (const f of offer.cpuFeatures ?? []) {
    labels[`${CPU_FEATURE_LABEL_PREFIX}${f}`] = 'true';
    labels[`${HOST_MODEL_FEATURE_LABEL_PREFIX}${f}`] = 'true';
  }
  if (offer.hostModel !== undefined) labels[`${HOST_MODEL_LABEL_PREFIX}${offer.hostModel}`] = 'true';
  if (offer.vendor !== undefined) labels[`${CPU_VENDOR_LABEL_PREFIX}${offer.vendor}`] = 'true';
  return labels;
}

/** Labels, heartbeat and device resources on one node (status first: the scheduler needs the devices). */
export async function beat(nodes: ResourceClient<AgentNode>, node: AgentNode, offer: NodeOffer): Promise<void> {
  const name = node.metadata.name ?? '';
  const missing = DEVICE_RESOURCES.filter((r) => node.status?.allocatable?.[r] === undefined);
  if (missing.length > 0) {
    const devices = Object.fromEntries(DEVICE_RESOURCES.map((r) => [r, DEVICES_PER_NODE]));
    await nodes.patchStatus({ name }, { capacity: devices, allocatable: devices });
  }
  await nodes.mergePatch({ name }, { metadata: { labels: nodeLabels(offer), annotations: { [HEARTBEAT_ANNOTATION]: now() } } });
}
