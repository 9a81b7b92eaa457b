/** What the reconcilers share: clients, caches and the ports to the outside world. */
import type { InternalVirtualMachine, InternalVirtualMachineInstance, InternalVirtualMachineInstanceMigration } from '../../shared/api/internal/resources.js';
import type { VirtualMachineIPAddress, VirtualMachineIPAddressLease } from '../../shared/api/resources/addresses.js';
import type { VirtualDisk } from '../../shared/api/resources/virtualdisk.js';
import type { ClusterVirtualImage, VirtualImage } from '../../shared/api/resources/virtualimage.js';
import type { VirtualMachine } from '../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../shared/api/resources/virtualmachineclass.js';
import type { VirtualMachineOperation } from '../../shared/api/resources/vmop.js';
import type { EventRecorder, KubeObject, ResourceClient, ResourcePort } from '../../shared/kube/index.js';
import type { ControllerConfig } from './config.js';
import type { ObjectCache } from './engine/cache.js';
import type { ReadyPort } from './engine/ready-port.js';
import type { Clients, Node, Pod } from './kube/resources.js';
import type { GuestEvent } from './reconcilers/vm/power.js';
import type { ClaimHotplug } from './reconcilers/vmbda/hotplug.js';
import type { ResourceClaim, ResourceClaimTemplate } from '../../shared/api/k8s/resource.js';
import type { USBDevice } from '../../shared/api/resources/usb.js';
import type { CidrSource } from '../../shared/kube/module-config-cidrs.js';

export interface Caches {
  vms: ObjectCache<VirtualMachine>;
  classes: ObjectCache<VirtualMachineClass>;
  disks: ObjectCache<VirtualDisk>;
  images: ObjectCache<VirtualImage>;
  clusterImages: ObjectCache<ClusterVirtualImage>;
  kvvms: ObjectCache<InternalVirtualMachine>;
  kvvmis: ObjectCache<InternalVirtualMachineInstance>;
  migrations: ObjectCache<InternalVirtualMachineInstanceMigration>;
  vmops: ObjectCache<VirtualMachineOperation>;
  vmips: ObjectCache<VirtualMachineIPAddress>;
  leases: ObjectCache<VirtualMachineIPAddressLease>;
  nodes: ObjectCache<Node>;
  /** The virt-launcher pods (label-selected), for the VM's pods, versions and propagated metadata. */
  pods: ObjectCache<Pod>;
}

/** The subnets VM addresses come from (ModuleConfig or environment); empty means IPAM is off. */
export type { CidrSource };

/** Reads why an instance ended from its virt-launcher pod. */
export interface LauncherPods {
  guestEvent(vmi: InternalVirtualMachineInstance, signal: AbortSignal): Promise<GuestEvent>;
  /**
   * Why a launcher pod being created cannot get its volumes: its latest event when that is
   * FailedAttachVolume or FailedMount (`<reason>: <message>`), else undefined.
   */
  volumeError(pod: Pod, signal: AbortSignal): Promise<string | undefined>;
}

/** The read side of one kind as the reconcilers use it; an ObjectCache satisfies it. */
export type CachePort<T extends KubeObject> = Pick<
  ObjectCache<T>,
  'get' | 'list' | 'byIndex' | 'countByIndex' | 'remember' | 'forget' | 'invalid' | 'removals'
>;

/** Every client as a narrow port (ResourcePort), so handlers can be tested on in-memory kinds. */
export type ClientPorts = { readonly [K in keyof Clients]: Clients[K] extends ResourceClient<infer T> ? ResourcePort<T> : never };
/** Every cache as a narrow port (CachePort). */
export type CachePorts = { readonly [K in keyof Caches]: Caches[K] extends ObjectCache<infer T> ? CachePort<T> : never };

/**
 * What the VM reconciler needs for `spec.usbDevices`, from the USB reconcilers' informers once they
 * run (reconcilers/usb): USBDevices, their ResourceClaimTemplates, the claims that reserve devices for
 * VMs, and the subresource API's addresourceclaim/removeresourceclaim.
 */
export interface VmUsbPort {
  usbDevices: CachePort<USBDevice>;
  templates: CachePort<ResourceClaimTemplate>;
  claims: CachePort<ResourceClaim>;
  claimClient: ResourcePort<ResourceClaim>;
  hotplug: ClaimHotplug;
}

/** What KubeVirt's configuration lacks that our internal objects need (reconcilers/kubevirt-config). */
export interface KubeVirtConfigPort {
  /** The object, for messages (`InternalVirtualizationKubeVirt namespace/config`). */
  readonly where: string;
  /** One phrase per missing part; empty when nothing is missing or the object does not exist. */
  missing(): readonly string[];
}

/**
 * What a handler gets: ports, not concrete clients. The daemon passes its clients and caches (they
 * satisfy the ports); unit tests pass daemons/controller/testing's in-memory kinds.
 */
export interface Deps {
  clients: ClientPorts;
  caches: CachePorts;
  config: ControllerConfig;
  cidrs: CidrSource;
  launcher: LauncherPods;
  /** Fills once the USB reconcilers' caches are synced; stays empty while USB passthrough is off. */
  readonly usb: ReadyPort<VmUsbPort>;
  /** KubeVirt's configuration as far as the VMs depend on it. */
  readonly kubevirt: KubeVirtConfigPort;
  /** Events about the objects (events.k8s.io), best effort: a failure is logged, never thrown. */
  readonly events: EventPort;
}

/** The controller's one event recorder, as a port. */
export type EventPort = Pick<EventRecorder, 'record'>;
