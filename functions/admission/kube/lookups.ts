/**
 * Lookups against the apiserver through the shared kube client, each behind the TTL cache. A missing
 * object is `undefined` (a missing kind too: its CRD may not be installed); any other failure is a
 * LookupError naming the object.
 */
import type { ZodType } from 'zod';
import {
  virtualMachineIPAddress,
  virtualMachineIPAddressLease,
  type VirtualMachineIPAddress,
  type VirtualMachineIPAddressLease,
} from '../../../shared/api/resources/addresses.js';
import { usbDevice, type USBDevice } from '../../../shared/api/resources/usb.js';
import { virtualDisk, type VirtualDisk } from '../../../shared/api/resources/virtualdisk.js';
import { clusterVirtualImage, virtualImage, type ClusterVirtualImage, type VirtualImage } from '../../../shared/api/resources/virtualimage.js';
import { virtualMachine, type VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { virtualMachineClass, type VirtualMachineClass } from '../../../shared/api/resources/virtualmachineclass.js';
import { virtualMachineBlockDeviceAttachment, type VirtualMachineBlockDeviceAttachment } from '../../../shared/api/resources/vmbda.js';
import { virtualMachineOperation, type VirtualMachineOperation } from '../../../shared/api/resources/vmop.js';
import { virtualMachinePool, type VirtualMachinePool } from '../../../shared/api/resources/vmpool.js';
import type { ResourceDefinition } from '../../../shared/api/k8s/crd.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import { descriptorOf, type KubeClient, type KubeObject, type ResourceClient, type ResourceDescriptor } from '../../../shared/kube/index.js';
import type { TtlCache } from '../../../shared/cache/ttl-cache.js';
import {
  LookupError,
  type KubeVersion,
  type Lookups,
  type ModuleSettings,
  type NetworkKind,
  type NodeView,
  type PvcView,
  type StorageClassView,
} from '../lookups.js';
import { ModuleConfigSchema, cidrsOf, defaultStorageClassOf, featureGatesOf } from '../rules/moduleconfig/view.js';
import * as r from './resources.js';

const FIELD_MANAGER = 'virtualization-admission';

export class KubeLookups implements Lookups {
  constructor(
    private readonly kube: KubeClient,
    private readonly cache: TtlCache,
  ) {}

  private client<T extends KubeObject>(d: ResourceDescriptor, schema: ZodType<T>): ResourceClient<T> {
    return this.kube.resource(d, schema, FIELD_MANAGER);
  }

  private ours<S extends ZodType<KubeObject>>(def: ResourceDefinition<S>): ResourceClient<S['_output']> {
    return this.client(descriptorOf(def), def.schema);
  }

  /** One object, cached; undefined when it (or its kind) does not exist. */
  private one<T>(what: string, load: () => Promise<T>): Promise<T | undefined> {
    return this.cache.get(what, async () => {
      try {
        return await load();
      } catch (err: unknown) {
        if (err instanceof NotFoundError) return undefined;
        throw new LookupError(what, err);
      }
    });
  }

  /** A list, cached; empty when the kind does not exist. */
  private many<T>(what: string, load: () => Promise<{ items: T[] }>): Promise<readonly T[]> {
    return this.one(what, async () => (await load()).items).then((items) => items ?? []);
  }

  virtualMachineClass(name: string): Promise<VirtualMachineClass | undefined> {
    return this.one(`VirtualMachineClass ${name}`, () => this.ours(virtualMachineClass).get({ name }));
  }
  virtualMachineClasses(): Promise<readonly VirtualMachineClass[]> {
    return this.many('VirtualMachineClasses', () => this.ours(virtualMachineClass).list());
  }
  virtualMachine(namespace: string, name: string): Promise<VirtualMachine | undefined> {
    return this.one(`VirtualMachine ${namespace}/${name}`, () => this.ours(virtualMachine).get({ namespace, name }));
  }
  virtualMachines(namespace: string): Promise<readonly VirtualMachine[]> {
    return this.many(`VirtualMachines in ${namespace}`, () => this.ours(virtualMachine).list({ namespace }));
  }
  virtualMachineIPAddress(namespace: string, name: string): Promise<VirtualMachineIPAddress | undefined> {
    return this.one(`VirtualMachineIPAddress ${namespace}/${name}`, () => this.ours(virtualMachineIPAddress).get({ namespace, name }));
  }
  ipAddressLease(name: string): Promise<VirtualMachineIPAddressLease | undefined> {
    return this.one(`VirtualMachineIPAddressLease ${name}`, () => this.ours(virtualMachineIPAddressLease).get({ name }));
  }
  ipAddressLeases(): Promise<readonly VirtualMachineIPAddressLease[]> {
    return this.many('VirtualMachineIPAddressLeases', () => this.ours(virtualMachineIPAddressLease).list());
  }
  attachments(namespace: string): Promise<readonly VirtualMachineBlockDeviceAttachment[]> {
    return this.many(`VirtualMachineBlockDeviceAttachments in ${namespace}`, () => this.ours(virtualMachineBlockDeviceAttachment).list({ namespace }));
  }
  operations(namespace: string): Promise<readonly VirtualMachineOperation[]> {
    return this.many(`VirtualMachineOperations in ${namespace}`, () => this.ours(virtualMachineOperation).list({ namespace }));
  }
  virtualDisk(namespace: string, name: string): Promise<VirtualDisk | undefined> {
    return this.one(`VirtualDisk ${namespace}/${name}`, () => this.ours(virtualDisk).get({ namespace, name }));
  }
  virtualImage(namespace: string, name: string): Promise<VirtualImage | undefined> {
    return this.one(`VirtualImage ${namespace}/${name}`, () => this.ours(virtualImage).get({ namespace, name }));
  }
  clusterVirtualImage(name: string): Promise<ClusterVirtualImage | undefined> {
    return this.one(`ClusterVirtualImage ${name}`, () => this.ours(clusterVirtualImage).get({ name }));
  }
  virtualMachinePool(namespace: string, name: string): Promise<VirtualMachinePool | undefined> {
    return this.one(`VirtualMachinePool ${namespace}/${name}`, () => this.ours(virtualMachinePool).get({ namespace, name }));
  }
  usbDevice(namespace: string, name: string): Promise<USBDevice | undefined> {
    return this.one(`USBDevice ${namespace}/${name}`, () => this.ours(usbDevice).get({ namespace, name }));
  }

  async moduleSettings(): Promise<ModuleSettings> {
    const mc = await this.one('ModuleConfig virtualization', () => this.client(r.MODULE_CONFIG, ModuleConfigSchema).get({ name: 'virtualization' }));
    return {
      virtualMachineCIDRs: cidrsOf(mc),
      featureGates: featureGatesOf(mc),
      virtualImagesDefaultStorageClass: defaultStorageClassOf(mc, 'virtualImages'),
      virtualDisksDefaultStorageClass: defaultStorageClassOf(mc, 'virtualDisks'),
    };
  }

  async storageClass(name: string): Promise<StorageClassView | undefined> {
    return (await this.storageClasses()).find((c) => c.name === name);
  }
  async storageClasses(): Promise<readonly StorageClassView[]> {
    const items = await this.many('StorageClasses', () => this.client(r.STORAGE_CLASS, r.StorageClassView).list());
    return items.map((c) => ({
      name: c.metadata.name ?? '',
      provisioner: c.provisioner ?? '',
      isDefault: c.metadata.annotations?.[r.IS_DEFAULT_CLASS] === 'true',
    }));
  }

  async persistentVolumeClaim(namespace: string, name: string): Promise<PvcView | undefined> {
    const pvc = await this.one(`PersistentVolumeClaim ${namespace}/${name}`, () => this.client(r.PVC, r.PvcView).get({ namespace, name }));
    if (pvc === undefined) return undefined;
    const size = pvc.spec?.resources?.requests?.['storage'];
    return {
      storageClassName: pvc.spec?.storageClassName ?? undefined,
      size: size === undefined ? undefined : String(size),
      accessModes: pvc.spec?.accessModes ?? [],
    };
  }

  async node(name: string): Promise<NodeView | undefined> {
    return (await this.nodes()).find((n) => n.name === name);
  }
  async nodes(): Promise<readonly NodeView[]> {
    const items = await this.many('Nodes', () => this.client(r.NODE, r.NodeView).list());
    return items.map((n) => ({
      name: n.metadata.name ?? '',
      addresses: (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP' || a.type === 'ExternalIP').map((a) => a.address),
      annotations: n.metadata.annotations ?? {},
    }));
  }

  async networkExists(kind: NetworkKind, namespace: string, name: string): Promise<boolean> {
    const d = kind === 'Network' ? r.NETWORK : r.CLUSTER_NETWORK;
    const ref = kind === 'Network' ? { namespace, name } : { name };
    return (await this.one(`${kind} ${kind === 'Network' ? `${namespace}/` : ''}${name}`, () => this.client(d, r.AnyObject).get(ref))) !== undefined;
  }

  async systemNetwork(name: string): Promise<{ ready: boolean } | undefined> {
    const net = await this.one(`SystemNetwork ${name}`, () => this.client(r.SYSTEM_NETWORK, r.ConditionsView).get({ name }));
    if (net === undefined) return undefined;
    return { ready: (net.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') };
  }

  async apiAvailable(group: string, version: string, plural: string): Promise<boolean> {
    const list = await this.one(`API ${group}/${version}`, () =>
      this.kube.rest.request({ method: 'GET', path: `/apis/${group}/${version}`, what: `discover ${group}/${version}` }),
    );
    const resources = (list as { resources?: Array<{ name?: unknown }> } | undefined)?.resources ?? [];
    return resources.some((res) => res.name === plural);
  }

  async serverVersion(): Promise<KubeVersion> {
    const info = (await this.one('the Kubernetes version', () => this.kube.rest.request({ method: 'GET', path: '/version', what: 'get /version' }))) as
      { major?: unknown; minor?: unknown } | undefined;
    return { major: versionPart(info?.major, 1), minor: versionPart(info?.minor, 0) };
  }
}

/** "1" -> 1, "34+" -> 34; anything else -> `fallback`. */
function versionPart(value: unknown, fallback: number): number {
  const n = typeof value === 'string' ? Number.parseInt(value, 10) : Number.NaN;
  return Number.isNaN(n) ? fallback : n;
}
