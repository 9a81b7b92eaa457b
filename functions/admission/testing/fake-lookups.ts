/** An in-memory Lookups for unit tests: fill the world, optionally make some lookups fail. */
import type { VirtualMachineIPAddress, VirtualMachineIPAddressLease } from '../../../shared/api/resources/addresses.js';
import type { USBDevice } from '../../../shared/api/resources/usb.js';
import type { VirtualDisk } from '../../../shared/api/resources/virtualdisk.js';
import type { ClusterVirtualImage, VirtualImage } from '../../../shared/api/resources/virtualimage.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../../shared/api/resources/virtualmachineclass.js';
import type { VirtualMachineBlockDeviceAttachment } from '../../../shared/api/resources/vmbda.js';
import type { VirtualMachineOperation } from '../../../shared/api/resources/vmop.js';
import type { VirtualMachinePool } from '../../../shared/api/resources/vmpool.js';
import {
  LookupError,
  type ClusterFacts,
  type KubeVersion,
  type Lookups,
  type ModuleSettings,
  type NetworkKind,
  type NodeView,
  type PvcView,
  type RuleContext,
  type StorageClassView,
} from '../lookups.js';

interface Meta {
  metadata: { name?: string | undefined; namespace?: string | undefined };
}

export interface World {
  classes: VirtualMachineClass[];
  settings: ModuleSettings;
  vms: VirtualMachine[];
  vmips: VirtualMachineIPAddress[];
  leases: VirtualMachineIPAddressLease[];
  attachments: VirtualMachineBlockDeviceAttachment[];
  operations: VirtualMachineOperation[];
  disks: VirtualDisk[];
  images: VirtualImage[];
  clusterImages: ClusterVirtualImage[];
  pools: VirtualMachinePool[];
  usbDevices: USBDevice[];
  storageClasses: StorageClassView[];
  pvcs: Array<PvcView & { namespace: string; name: string }>;
  nodes: NodeView[];
  networks: Array<{ kind: NetworkKind; namespace: string; name: string }>;
  systemNetworks: Array<{ name: string; ready: boolean }>;
  /** `group/version/plural` the apiserver serves. */
  apis: string[];
  version: KubeVersion;
}

export const NO_SETTINGS: ModuleSettings = {
  virtualMachineCIDRs: [],
  featureGates: [],
  virtualImagesDefaultStorageClass: undefined,
  virtualDisksDefaultStorageClass: undefined,
};

export function emptyWorld(): World {
  return {
    classes: [],
    settings: { ...NO_SETTINGS, virtualMachineCIDRs: ['10.66.0.0/16'] },
    vms: [],
    vmips: [],
    leases: [],
    attachments: [],
    operations: [],
    disks: [],
    images: [],
    clusterImages: [],
    pools: [],
    usbDevices: [],
    storageClasses: [],
    pvcs: [],
    nodes: [],
    networks: [],
    systemNetworks: [],
    apis: [],
    version: { major: 1, minor: 37 },
  };
}

const named = <T extends Meta>(items: readonly T[], namespace: string | undefined, name: string): T | undefined =>
  items.find((i) => i.metadata.name === name && (namespace === undefined || i.metadata.namespace === namespace));
const inNamespace = <T extends Meta>(items: readonly T[], namespace: string): T[] => items.filter((i) => i.metadata.namespace === namespace);

export class FakeLookups implements Lookups {
  /** Names of methods that throw a LookupError (an apiserver that cannot be reached). */
  readonly failing = new Set<keyof Lookups>();
  /** How many times each method was called. */
  readonly calls = new Map<string, number>();

  constructor(readonly world: World = emptyWorld()) {}

  private async read<T>(method: keyof Lookups, what: string, value: () => T): Promise<T> {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    await Promise.resolve();
    if (this.failing.has(method)) throw new LookupError(what, new Error('connection refused'));
    return value();
  }

  virtualMachineClass(name: string): Promise<VirtualMachineClass | undefined> {
    return this.read('virtualMachineClass', `VirtualMachineClass ${name}`, () => named(this.world.classes, undefined, name));
  }
  virtualMachineClasses(): Promise<readonly VirtualMachineClass[]> {
    return this.read('virtualMachineClasses', 'VirtualMachineClasses', () => this.world.classes);
  }
  moduleSettings(): Promise<ModuleSettings> {
    return this.read('moduleSettings', 'ModuleConfig virtualization', () => this.world.settings);
  }
  virtualMachine(namespace: string, name: string): Promise<VirtualMachine | undefined> {
    return this.read('virtualMachine', `VirtualMachine ${namespace}/${name}`, () => named(this.world.vms, namespace, name));
  }
  virtualMachines(namespace: string): Promise<readonly VirtualMachine[]> {
    return this.read('virtualMachines', `VirtualMachines in ${namespace}`, () => inNamespace(this.world.vms, namespace));
  }
  virtualMachineIPAddress(namespace: string, name: string): Promise<VirtualMachineIPAddress | undefined> {
    return this.read('virtualMachineIPAddress', `VirtualMachineIPAddress ${namespace}/${name}`, () => named(this.world.vmips, namespace, name));
  }
  ipAddressLease(name: string): Promise<VirtualMachineIPAddressLease | undefined> {
    return this.read('ipAddressLease', `VirtualMachineIPAddressLease ${name}`, () => named(this.world.leases, undefined, name));
  }
  ipAddressLeases(): Promise<readonly VirtualMachineIPAddressLease[]> {
    return this.read('ipAddressLeases', 'VirtualMachineIPAddressLeases', () => this.world.leases);
  }
  attachments(namespace: string): Promise<readonly VirtualMachineBlockDeviceAttachment[]> {
    return this.read('attachments', `VirtualMachineBlockDeviceAttachments in ${namespace}`, () => inNamespace(this.world.attachments, namespace));
  }
  operations(namespace: string): Promise<readonly VirtualMachineOperation[]> {
    return this.read('operations', `VirtualMachineOperations in ${namespace}`, () => inNamespace(this.world.operations, namespace));
  }
  virtualDisk(namespace: string, name: string): Promise<VirtualDisk | undefined> {
    return this.read('virtualDisk', `VirtualDisk ${namespace}/${name}`, () => named(this.world.disks, namespace, name));
  }
  virtualImage(namespace: string, name: string): Promise<VirtualImage | undefined> {
    return this.read('virtualImage', `VirtualImage ${namespace}/${name}`, () => named(this.world.images, namespace, name));
  }
  clusterVirtualImage(name: string): Promise<ClusterVirtualImage | undefined> {
    return this.read('clusterVirtualImage', `ClusterVirtualImage ${name}`, () => named(this.world.clusterImages, undefined, name));
  }
  virtualMachinePool(namespace: string, name: string): Promise<VirtualMachinePool | undefined> {
    return this.read('virtualMachinePool', `VirtualMachinePool ${namespace}/${name}`, () => named(this.world.pools, namespace, name));
  }
  usbDevice(namespace: string, name: string): Promise<USBDevice | undefined> {
    return this.read('usbDevice', `USBDevice ${namespace}/${name}`, () => named(this.world.usbDevices, namespace, name));
  }
  storageClass(name: string): Promise<StorageClassView | undefined> {
    return this.read('storageClass', `StorageClass ${name}`, () => this.world.storageClasses.find((c) => c.name === name));
  }
  storageClasses(): Promise<readonly StorageClassView[]> {
    return this.read('storageClasses', 'StorageClasses', () => this.world.storageClasses);
  }
  persistentVolumeClaim(namespace: string, name: string): Promise<PvcView | undefined> {
    return this.read('persistentVolumeClaim', `PersistentVolumeClaim ${namespace}/${name}`, () =>
      this.world.pvcs.find((p) => p.namespace === namespace && p.name === name),
    );
  }
  node(name: string): Promise<NodeView | undefined> {
    return this.read('node', `Node ${name}`, () => this.world.nodes.find((n) => n.name === name));
  }
  nodes(): Promise<readonly NodeView[]> {
    return this.read('nodes', 'Nodes', () => this.world.nodes);
  }
  networkExists(kind: NetworkKind, namespace: string, name: string): Promise<boolean> {
    return this.read('networkExists', `${kind} ${name}`, () =>
      this.world.networks.some((n) => n.kind === kind && n.name === name && (kind === 'ClusterNetwork' || n.namespace === namespace)),
    );
  }
  systemNetwork(name: string): Promise<{ readonly ready: boolean } | undefined> {
    return this.read('systemNetwork', `SystemNetwork ${name}`, () => this.world.systemNetworks.find((n) => n.name === name));
  }
  apiAvailable(group: string, version: string, plural: string): Promise<boolean> {
    return this.read('apiAvailable', `API ${group}/${version}`, () => this.world.apis.includes(`${group}/${version}/${plural}`));
  }
  serverVersion(): Promise<KubeVersion> {
    return this.read('serverVersion', 'the Kubernetes version', () => this.world.version);
  }
}

export const EE_FACTS: ClusterFacts = {
  edition: 'EE',
  podSubnetCIDRs: ['10.111.0.0/16'],
  serviceSubnetCIDRs: ['10.222.0.0/16'],
  moduleNamespace: 'd8-virtualization',
  dvcrPvcName: 'dvcr',
};

export function context(lookups: Lookups = new FakeLookups(), cluster: Partial<ClusterFacts> = {}): RuleContext {
  return { lookups, cluster: { ...EE_FACTS, ...cluster } };
}
