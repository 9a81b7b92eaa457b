/**
 * What rules may read besides the request: related objects and cluster facts. The interface is narrow
 * so that unit tests use an in-memory fake (testing/fake-lookups.ts) and production a kube-backed one
 * with a small cache (kube-lookups.ts). A read that fails throws LookupError; the rule runner turns it
 * into a denial that names what could not be read.
 */
import { AppError, errorMessage } from '../../shared/errors/index.js';
import type { VirtualMachineIPAddress, VirtualMachineIPAddressLease } from '../../shared/api/resources/addresses.js';
import type { USBDevice } from '../../shared/api/resources/usb.js';
import type { VirtualDisk } from '../../shared/api/resources/virtualdisk.js';
import type { ClusterVirtualImage, VirtualImage } from '../../shared/api/resources/virtualimage.js';
import type { VirtualMachine } from '../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../shared/api/resources/virtualmachineclass.js';
import type { VirtualMachineBlockDeviceAttachment } from '../../shared/api/resources/vmbda.js';
import type { VirtualMachineOperation } from '../../shared/api/resources/vmop.js';
import type { VirtualMachinePool } from '../../shared/api/resources/vmpool.js';

/** The settings of the `virtualization` ModuleConfig that rules read (empty when there is none). */
export interface ModuleSettings {
  readonly virtualMachineCIDRs: readonly string[];
  readonly featureGates: readonly string[];
  readonly virtualImagesDefaultStorageClass: string | undefined;
  readonly virtualDisksDefaultStorageClass: string | undefined;
}

export interface StorageClassView {
  readonly name: string;
  readonly provisioner: string;
  readonly isDefault: boolean;
}

export interface NodeView {
  readonly name: string;
  /** InternalIP and ExternalIP addresses. */
  readonly addresses: readonly string[];
  readonly annotations: Readonly<Record<string, string>>;
}

export interface PvcView {
  readonly storageClassName: string | undefined;
  /** spec.resources.requests.storage. */
  readonly size: string | undefined;
  readonly accessModes: readonly string[];
}

export interface KubeVersion {
  readonly major: number;
  readonly minor: number;
}

/** SDN networks a VM interface may name (group network.deckhouse.io of the SDN module). */
export type NetworkKind = 'Network' | 'ClusterNetwork';

export interface Lookups {
  virtualMachineClass(name: string): Promise<VirtualMachineClass | undefined>;
  virtualMachineClasses(): Promise<readonly VirtualMachineClass[]>;
  moduleSettings(): Promise<ModuleSettings>;
  virtualMachine(namespace: string, name: string): Promise<VirtualMachine | undefined>;
  virtualMachines(namespace: string): Promise<readonly VirtualMachine[]>;
  virtualMachineIPAddress(namespace: string, name: string): Promise<VirtualMachineIPAddress | undefined>;
  ipAddressLease(name: string): Promise<VirtualMachineIPAddressLease | undefined>;
  ipAddressLeases(): Promise<readonly VirtualMachineIPAddressLease[]>;
  attachments(namespace: string): Promise<readonly VirtualMachineBlockDeviceAttachment[]>;
  operations(namespace: string): Promise<readonly VirtualMachineOperation[]>;
  virtualDisk(namespace: string, name: string): Promise<VirtualDisk | undefined>;
  virtualImage(namespace: string, name: string): Promise<VirtualImage | undefined>;
  clusterVirtualImage(name: string): Promise<ClusterVirtualImage | undefined>;
  virtualMachinePool(namespace: string, name: string): Promise<VirtualMachinePool | undefined>;
  usbDevice(namespace: string, name: string): Promise<USBDevice | undefined>;
  storageClass(name: string): Promise<StorageClassView | undefined>;
  storageClasses(): Promise<readonly StorageClassView[]>;
  persistentVolumeClaim(namespace: string, name: string): Promise<PvcView | undefined>;
  node(name: string): Promise<NodeView | undefined>;
  nodes(): Promise<readonly NodeView[]>;
  /** Whether a Network (in `namespace`) or ClusterNetwork exists. */
  networkExists(kind: NetworkKind, namespace: string, name: string): Promise<boolean>;
  /** A SystemNetwork and whether its Ready condition is True; undefined when it does not exist. */
  systemNetwork(name: string): Promise<{ readonly ready: boolean } | undefined>;
  /** Whether the apiserver serves `plural` in group/version (discovery). */
  apiAvailable(group: string, version: string, plural: string): Promise<boolean>;
  serverVersion(): Promise<KubeVersion>;
}

/** Cluster facts from the function's configuration, not from the apiserver. */
export interface ClusterFacts {
  readonly edition: 'CE' | 'EE';
  readonly podSubnetCIDRs: readonly string[];
  readonly serviceSubnetCIDRs: readonly string[];
  /** Namespace of the module; its service accounts may write the module's own metadata keys. */
  readonly moduleNamespace: string;
  /** Name of the DVCR PersistentVolumeClaim in the module namespace. */
  readonly dvcrPvcName: string;
}

/** Everything a rule may consult. */
export interface RuleContext {
  readonly lookups: Lookups;
  readonly cluster: ClusterFacts;
}

/** A related object could not be read; the request is denied naming it. */
export class LookupError extends AppError {
  readonly code = 'LOOKUP_FAILED';
  readonly status = 503;
  readonly what: string;

  constructor(what: string, cause: unknown) {
    super(`could not read ${what}: ${errorMessage(cause)}`, { cause });
    this.what = what;
  }
}

export const SDN_GROUP = 'network.deckhouse.io';
export const SDN_VERSION = 'v1alpha1';
