/**
 * How a reconciler is registered: one value per reconciler (reconcilers/<kind>/declaration.ts), listed
 * once in reconcilers/index.ts. The controller builds the caches and runners from that list.
 */
import type { KubeClient, KubeObject, ResourceClient } from '../../shared/kube/index.js';
import type { ModuleConfigCidrs } from '../../shared/kube/module-config-cidrs.js';
import type { Logger } from '../../shared/log/index.js';
import type { Scope } from './caches.js';
import type { ControllerConfig } from './config.js';
import type { Caches, Deps, LauncherPods } from './deps.js';
import type { ObjectCache } from './engine/cache.js';
import type { ReconcileFn } from './engine/runner.js';
import type { Clients } from './kube/resources.js';
import type { ProgressReader } from './reconcilers/provisioning/helpers.js';
import type { GuestFilesystems } from './reconcilers/snapshot/freeze.js';
import type { ClaimHotplug, VolumeHotplug } from './reconcilers/vmbda/hotplug.js';

/** What the cluster serves and the config turns on, settled once before anything is built. */
export interface Features {
  /** STORAGE_RECONCILERS: images, disks, attachments and snapshots. */
  readonly storage: boolean;
  /** The cluster serves snapshot.storage.k8s.io/v1 VolumeSnapshots. */
  readonly volumeSnapshots: boolean;
  /** USB passthrough: USB_RECONCILERS and resource.k8s.io/v1 served. */
  readonly usb: boolean;
  /** The apiserver serves KubeVirt's configuration objects (InternalVirtualizationKubeVirt). */
  readonly kubevirtConfig: boolean;
}

/** The ports to the outside world a start may replace (tests do); each has a real default. */
export interface Ports {
  /** Where guest power events are read (virt-launcher pods by default). */
  launcher?: LauncherPods;
  /** How attachments hot-plug volumes (the subresource API by default). */
  hotplug?: VolumeHotplug;
  /** How VMs hot-plug their spec.usbDevices (addresourceclaim; the subresource API by default). */
  claims?: ClaimHotplug;
  /** How importer progress is read (the importer Pod's metrics endpoint by default). */
  progress?: ProgressReader;
  /** How snapshots freeze and thaw running VMs (the subresource API by default). */
  filesystems?: GuestFilesystems;
  /** Where generated MAC addresses take their random bytes (`pick(256)`; crypto's randomInt by default). */
  macRandom?: (n: number) => number;
}

/** What a declaration builds from: the controller's clients, core caches and ports, all fixed before any start. */
export interface Wiring {
  readonly kube: KubeClient;
  readonly config: ControllerConfig;
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly features: Features;
  readonly ports: Ports;
  readonly clients: Clients;
  /** The core caches (every declaration may read them; always synced before any runner starts). */
  readonly caches: Caches;
  /** virtualMachineCIDRs (ModuleConfig or environment) and their changes. */
  readonly cidrs: ModuleConfigCidrs;
  /** What the VM-side reconcilers share (`usb` is a port that fills once the USB caches sync). */
  readonly deps: Deps;
  /** The value `build` makes, built once per controller and shared by whoever asks (e.g. the storage caches). */
  shared<T>(build: (w: Wiring) => T): T;
  /** A cache beyond the core ones: started and stopped with the rest; a declaration lists it in `caches` to wait for it. */
  informer<T extends KubeObject>(client: ResourceClient<T>, scope: Scope, transform?: (obj: T) => T): ObjectCache<T>;
}

/** One reconciler: its name, workers, the caches it needs, what enqueues it and how it reconciles. */
export interface ReconcilerDeclaration {
  /** The runner's name (logs, metrics); unique in the list. */
  readonly name: string;
  /** How many workers, from the config. */
  workers(config: ControllerConfig): number;
  /** Whether it runs (default: always). */
  enabled?(features: Features): boolean;
  /**
   * Starts once its own caches sync, without holding the controller's start (USB: its informers may
   * wait long for a DRA driver's objects). Others start together once every needed cache synced.
   */
  readonly late?: boolean;
  /** The caches beyond the core ones it waits for before its workers start. */
  caches?(w: Wiring): readonly ObjectCache<KubeObject>[];
  /** The reconcile function. */
  reconcile(w: Wiring): ReconcileFn;
  /** Every event source that enqueues it: register them on the caches, push keys through `enqueue`. */
  sources(w: Wiring, enqueue: (key: string) => void): void;
}

/** Half the configured workers (at least one): what most reconcilers run. */
export const someWorkers = (config: ControllerConfig): number => Math.max(1, Math.floor(config.RECONCILE_WORKERS / 2));
