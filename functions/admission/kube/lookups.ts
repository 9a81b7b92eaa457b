/**
 * Lookups against the apiserver through the shared kube client, each behind the TTL cache. A missing
 * object is `undefined` (a missing kind too: its CRD may not be installed); any other failure is a
 * LookupError naming the object. The cache holds what the rules read: objects of the module without
 * `managedFields` (no rule reads them), foreign kinds (storage classes, PVCs, nodes, networks) only as
 * the small views the rules get.
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
import {
  descriptorOf,
  withoutManagedFields,
  type KubeClient,
  type KubeObject,
  type ResourceClient,
  type ResourceDescriptor,
} from '../../../shared/kube/index.js';
import type { LookupCache } from '../../../shared/cache/lookup-cache.js';
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
    private readonly cache: LookupCache,
  ) {}

  private client<T extends KubeObject>(d: ResourceDescriptor, schema: ZodType<T>): ResourceClient<T> {
    return this.kube.resource(d, schema, FIELD_MANAGER);
  }

  private ours<S extends ZodType<KubeObject>>(def: ResourceDefinition<S>): ResourceClient<S['_output']> {
    return this.client(descriptorOf(def), def.schema);
  }

  /** One object, cached (trimmed); undefined when it (or its kind) does not exist. */
  private one<T>(what: string, load: () => Promise<T>): Promise<T | undefined> {
    return this.cache.get(what, async () => {
      try {
        return trimmed(await load());
      } catch (err: unknown) {
        if (err instanceof NotFoundError) return undefined;
        throw new LookupError(what, err);
      }
    });
  }

  /** A list, cached (each item trimmed); empty when the kind does not exist. */
  private many<T>(what: string, load: () => Promise<{ items: T[] }>): Promise<readonly T[]> {
    return this.one(what, async () => (await load()).items.map(trimmed)).then((items) => items ?? []);
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
    return this.many('StorageClasses', async () => {
      const { items } = await this.client(r.STORAGE_CLASS, r.StorageClassView).list();
      return {
        items: items.map((c) => ({
          name: c.metadata.name ?? '',
          provisioner: c.provisioner ?? '',
          isDefault: c.metadata.annotations?.[r.IS_DEFAULT_CLASS] === 'true',
        })),
      };
    });
  }

  async persistentVolumeClaim(namespace: string, name: string): Promise<PvcView | undefined> {
    return this.one(`PersistentVolumeClaim ${namespace}/${name}`, async (): Promise<PvcView> => {
      const pvc = await this.client(r.PVC, r.PvcView).get({ namespace, name });
      const size = pvc.spec?.resources?.requests?.['storage'];
      return {
        storageClassName: pvc.spec?.storageClassName ?? undefined,
        size: size === undefined ? undefined : String(size),
        accessModes: pvc.spec?.accessModes ?? [],
      };
    });
  }

  async node(name: string): Promise<NodeView | undefined> {
    return (await this.nodes()).find((n) => n.name === name);
  }
  async nodes(): Promise<readonly NodeView[]> {
    return this.many('Nodes', async () => {
      const { items } = await this.client(r.NODE, r.NodeView).list();
      return {
        items: items.map((n) => ({
          name: n.metadata.name ?? '',
          addresses: (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP' || a.type === 'ExternalIP').map((a) => a.address),
          annotations: n.metadata.annotations ?? {},
        })),
      };
    });
  }

  async networkExists(kind: NetworkKind, namespace: string, name: string): Promise<boolean> {
    const d = kind === 'Network' ? r.NETWORK : r.CLUSTER_NETWORK;
    const ref = kind === 'Network' ? { namespace, name } : { name };
    const what = `${kind} ${kind === 'Network' ? `${namespace}/` : ''}${name}`;
    // Only existence is read: the cache keeps `true`.
    const exists = await this.one(what, async () => {
      await this.client(d, r.AnyObject).get(ref);
      return true;
    });
    return exists === true;
  }

  async systemNetwork(name: string): Promise<{ ready: boolean } | undefined> {
    return this.one(`SystemNetwork ${name}`, async () => {
      const net = await this.client(r.SYSTEM_NETWORK, r.ConditionsView).get({ name });
      return { ready: (net.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') };
    });
  }

  async apiAvailable(group: string, version: string, plural: string): Promise<boolean> {
    // The cache keeps the resource names of the group version, not its discovery document.
    const names = await this.one(`API ${group}/${version}`, async () => {
      const list = await this.kube.rest.request({ method: 'GET', path: `/apis/${group}/${version}`, what: `discover ${group}/${version}` });
      return ((list as { resources?: Array<{ name?: unknown }> } | undefined)?.resources ?? []).map((res) => res.name);
    });
    return (names ?? []).includes(plural);
  }

  async serverVersion(): Promise<KubeVersion> {
    const info = (await this.one('the Kubernetes version', () => this.kube.rest.request({ method: 'GET', path: '/version', what: 'get /version' }))) as
      { major?: unknown; minor?: unknown } | undefined;
    return { major: versionPart(info?.major, 1), minor: versionPart(info?.minor, 0) };
  }
}

/** A Kubernetes object without its managedFields; anything else (a view, a discovery document) as it is. */
function trimmed<T>(value: T): T {
  const meta = (value as { metadata?: unknown } | null | undefined)?.metadata;
  return meta !== null && typeof meta === 'object' ? (withoutManagedFields(value as KubeObject) as T) : value;
}

/** "1" -> 1, "34+" -> 34; anything else -> `fallback`. */
function versionPart(value: unknown, fallback: number): number {
  const n = typeof value === 'string' ? Number.parseInt(value, 10) : Number.NaN;
  return Number.isNaN(n) ? fallback : n;
}
