/** Every resource the module defines, in CRD generation order. */
import type { ResourceDefinition } from './k8s/crd.js';
import {
  internalCDI,
  internalKubeVirt,
  internalVirtualMachine,
  internalVirtualMachineInstance,
  internalVirtualMachineInstanceMigration,
} from './internal/resources.js';
import { virtualMachineIPAddress, virtualMachineIPAddressLease, virtualMachineMACAddress, virtualMachineMACAddressLease } from './resources/addresses.js';
import { virtualDiskSnapshot, virtualMachineSnapshot, virtualMachineSnapshotOperation } from './resources/snapshots.js';
import { storageProfile } from './resources/storageprofile.js';
import { nodeUSBDevice, usbDevice } from './resources/usb.js';
import { virtualDisk } from './resources/virtualdisk.js';
import { clusterVirtualImage, virtualImage } from './resources/virtualimage.js';
import { virtualMachine } from './resources/virtualmachine.js';
import { virtualMachineClass } from './resources/virtualmachineclass.js';
import { virtualMachineBlockDeviceAttachment } from './resources/vmbda.js';
import { virtualMachineOperation } from './resources/vmop.js';
import { virtualMachinePool } from './resources/vmpool.js';

/** The public API, group virtualization.deckhouse.io. */
export const PUBLIC_RESOURCES: readonly ResourceDefinition[] = [
  virtualMachine,
  virtualMachineClass,
  virtualMachinePool,
  virtualDisk,
  virtualImage,
  clusterVirtualImage,
  virtualMachineBlockDeviceAttachment,
  virtualMachineOperation,
  virtualMachineIPAddress,
  virtualMachineIPAddressLease,
  virtualMachineMACAddress,
  virtualMachineMACAddressLease,
  nodeUSBDevice,
  usbDevice,
  virtualDiskSnapshot,
  virtualMachineSnapshot,
  virtualMachineSnapshotOperation,
];

/** The module's storage API, group storage.virtualization.deckhouse.io. */
export const STORAGE_RESOURCES: readonly ResourceDefinition[] = [storageProfile];

/** The KubeVirt backend subset, in the renamed internal groups. */
export const INTERNAL_RESOURCES: readonly ResourceDefinition[] = [
  internalVirtualMachine,
  internalVirtualMachineInstance,
  internalVirtualMachineInstanceMigration,
  internalKubeVirt,
  internalCDI,
];

export const ALL_RESOURCES: readonly ResourceDefinition[] = [...PUBLIC_RESOURCES, ...STORAGE_RESOURCES, ...INTERNAL_RESOURCES];

/**
 * The resources whose CRD is rendered from these schemas into knative/crds. KubeVirt's own CRDs
 * (VirtualMachine, VirtualMachineInstance, VirtualMachineInstanceMigration, KubeVirt and the rest, 17
 * in all) are upstream's, renamed by the api-rewriter's rules into knative/kubevirt/crds; the schemas
 * above only type the fields our code writes and reads there.
 */
export const OWN_CRD_RESOURCES: readonly ResourceDefinition[] = [...PUBLIC_RESOURCES, ...STORAGE_RESOURCES, internalCDI];

/** knative/kubevirt/crds, as a kustomize resource of knative/crds. */
export const KUBEVIRT_CRDS_KUSTOMIZE_PATH = '../kubevirt/crds';

/** The definition of a kind (throws for an unknown kind: a programming error). */
export function resourceByKind(kind: string): ResourceDefinition {
  const def = ALL_RESOURCES.find((d) => d.kind === kind);
  if (def === undefined) throw new Error(`unknown kind ${kind}`);
  return def;
}
