/**
 * What route-forge reads from the apiserver, and only that: VirtualMachines (status.ipAddress,
 * status.nodeName, deletionTimestamp) and Cilium's CiliumNodes (spec.addresses of type
 * CiliumInternalIP). The schemas are deliberately narrow and loose: a VM whose spec the module's
 * schema would reject still has an address to route.
 */
import { z } from 'zod';
import { parseIPv4 } from '../../shared/api/ipv4.js';
import { CiliumNodeSchema, ciliumNodeDescriptor, type CiliumNode } from '../../shared/api/k8s/cilium.js';
import { ObjectMetaSchema } from '../../shared/api/k8s/core.js';
import { virtualMachine } from '../../shared/api/resources/virtualmachine.js';
import { objectKey, type ResourceDescriptor } from '../../shared/kube/index.js';
import type { VmAddress } from './model.js';

export const FIELD_MANAGER = 'vm-route-forge';

export const vmDescriptor: ResourceDescriptor = {
  group: virtualMachine.group,
  version: virtualMachine.version,
  plural: virtualMachine.plural,
  kind: virtualMachine.kind,
  namespaced: true,
};

export const RoutedVmSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  status: z.looseObject({ ipAddress: z.string().optional(), nodeName: z.string().optional() }).optional(),
});
export type RoutedVm = z.infer<typeof RoutedVmSchema>;

export { CiliumNodeSchema, ciliumNodeDescriptor, type CiliumNode };

/**
 * What the VM informer keeps of each VM (its cache transform): the fields `vmAddressOf` reads and the
 * ones the informer needs. A VM's spec, labels, annotations and managedFields are most of its size,
 * and with 10,000 VMs the store of whole objects was tens of MB of the daemon's memory.
 */
export function routedVmOnly(vm: RoutedVm): RoutedVm {
  const { name, namespace, resourceVersion, uid, deletionTimestamp } = vm.metadata;
  return {
    metadata: { name, namespace, resourceVersion, uid, deletionTimestamp },
    ...(vm.status === undefined ? {} : { status: { ipAddress: vm.status.ipAddress, nodeName: vm.status.nodeName } }),
  };
}

export function vmAddressOf(vm: RoutedVm): VmAddress {
  return {
    key: objectKey(vm.metadata),
    ip: vm.status?.ipAddress,
    node: vm.status?.nodeName,
    deleting: vm.metadata.deletionTimestamp !== undefined,
  };
}

/** The IPv4 CiliumInternalIP of a CiliumNode (the first one, as the original takes it). */
export function internalIPOf(node: CiliumNode): string | undefined {
  return node.spec?.addresses?.find((a) => a.type === 'CiliumInternalIP' && a.ip !== undefined && parseIPv4(a.ip) !== undefined)?.ip;
}

export function sameVmAddress(a: VmAddress | undefined, b: VmAddress): boolean {
  return a !== undefined && a.ip === b.ip && a.node === b.node && a.deleting === b.deleting;
}
