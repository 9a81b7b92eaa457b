import { setMaxListeners } from 'node:events';
import { NotFoundError } from '../../shared/errors/index.js';
import type { KubeClient } from '../../shared/kube/index.js';
import { childLogger, type Logger } from '../../shared/log/index.js';
import { allCaches, makeCaches, scopesOf } from './caches.js';
import { runCertificates, type RunningCertificates } from './certificates/run.js';
import type { ControllerConfig } from './config.js';
import type { Caches, Deps, LauncherPods, VmUsbPort } from './deps.js';
import { ReadyPort } from './engine/ready-port.js';
import { Runner, type ReconcileFn } from './engine/runner.js';
import { ModuleConfigCidrs } from '../../shared/kube/module-config-cidrs.js';
import { launcherPods } from './kube/launcher.js';
import { makeClients, type Clients } from './kube/resources.js';
import { collectResourceMetrics } from './metrics/collect.js';
import type { ControllerMetrics } from './metrics/runtime.js';
import { leaseReconciler } from './reconcilers/ipam/lease.js';
import { vmipReconciler } from './reconcilers/ipam/vmip.js';
import { vmReconciler } from './reconcilers/vm/index.js';
import { vmClassReconciler } from './reconcilers/vmclass/index.js';
import { vmopReconciler } from './reconcilers/vmop/index.js';
import { ResourceSliceSchema, resourceSliceDescriptor } from '../../shared/api/k8s/resource.js';
import { FIELD_MANAGER } from './kube/resources.js';
import { startUsbReconcilers, type UsbReconcilers } from './reconcilers/usb/index.js';
import type { ProgressReader } from './reconcilers/provisioning/helpers.js';
import { storageReconcilers, type StorageReconcilers } from './reconcilers/storage.js';
import { snapshotReconcilers, volumeSnapshotsServed, type SnapshotReconcilers } from './reconcilers/snapshot/index.js';
import type { GuestFilesystems } from './reconcilers/snapshot/freeze.js';
import { subresourceHotplug, type ClaimHotplug, type VolumeHotplug } from './reconcilers/vmbda/hotplug.js';
import { wireSources, type Runners } from './sources.js';
import { objectKey } from '../../shared/kube/index.js';

export interface StartOptions {
  kube: KubeClient;
  config: ControllerConfig;
  /** Aborts when leadership is lost or the process stops: every reconcile and write ends at once. */
  signal: AbortSignal;
  metrics?: ControllerMetrics;
  logger?: Logger;
  /** Where guest power events are read (virt-launcher pods by default). */
  launcher?: LauncherPods;
  /** Run the USB reconcilers (ResourceSlice → NodeUSBDevice → USBDevice → ResourceClaimTemplate); default: USB_RECONCILERS, when resource.k8s.io/v1 is served. */
  usb?: boolean;
  /** How attachments hot-plug volumes (the subresource API by default). */
  hotplug?: VolumeHotplug;
  /** How VMs hot-plug their spec.usbDevices (addresourceclaim; the subresource API by default). */
  claims?: ClaimHotplug;
  /** How importer progress is read (the importer Pod's metrics endpoint by default). */
  progress?: ProgressReader;
  /** Whether the cluster serves snapshot.storage.k8s.io/v1 VolumeSnapshots; probed by default. */
  volumeSnapshots?: boolean;
  /** How snapshots freeze and thaw running VMs (the subresource API by default). */
  filesystems?: GuestFilesystems;
}

/** The reconcilers of a leader, running. */
export interface RunningController {
  readonly caches: Caches;
  readonly clients: Clients;
  readonly runners: Runners;
  /** The vi, cvi, vd and vmbda reconcilers (undefined when STORAGE_RECONCILERS is off). */
  readonly storage: StorageReconcilers | undefined;
  /** The disk and VM snapshot reconcilers (with the storage ones). */
  readonly snapshots: SnapshotReconcilers | undefined;
  /** The resource gauges (d8_virtualization_*) from the caches, in the text format. */
  resourceMetrics(): Promise<string>;
  /** Stop the workers, then the informers; resolves when nothing runs any more. */
  stop(): Promise<void>;
}

/**
 * Start every reconciler: informers list and watch, the caches sync, then the workers begin. All of it
 * stops when `signal` aborts (leadership lost) or on stop().
 */
export async function startController(options: StartOptions): Promise<RunningController> {
  const log = options.logger ?? childLogger({ component: 'controller' });
  const stopping = new AbortController();
  const signal = AbortSignal.any([options.signal, stopping.signal]);
  // Every informer, runner and in-flight request listens on it.
  setMaxListeners(0, signal);
  const clients = makeClients(options.kube);
  const caches = makeCaches(clients, options.config, signal, log);
  const cidrs = new ModuleConfigCidrs(options.config.VIRTUAL_MACHINE_CIDRS);
  // USB passthrough's side of the VM reconciler: ready once the USB reconcilers' caches sync.
  const usbPort = new ReadyPort<VmUsbPort>();
  const deps: Deps = { clients, caches, config: options.config, cidrs, launcher: options.launcher ?? launcherPods(clients.pods), usb: usbPort };
  const runners = makeRunners(deps, signal, options, log);
  wireSources(caches, runners);
  const storageOptions = { kube: options.kube, signal, logger: log, hotplug: options.hotplug, progress: options.progress };
  const storage = options.config.STORAGE_RECONCILERS ? storageReconcilers(deps, caches, storageOptions, runnerFactory(signal, options, log)) : undefined;
  const snapshots =
    storage === undefined
      ? undefined
      : snapshotReconcilers(
          storage.deps,
          caches,
          {
            kube: options.kube,
            signal,
            logger: log,
            volumeSnapshots: options.volumeSnapshots ?? (await volumeSnapshotsServed(options.kube, signal, log)),
            filesystems: options.filesystems,
          },
          runnerFactory(signal, options, log),
        );
  const everyCache = [...allCaches(caches), ...(storage?.caches ?? []), ...(snapshots?.caches ?? [])];
  const everyRunner = [...runnerList(runners), ...Object.values(storage?.runners ?? {}), ...Object.values(snapshots?.runners ?? {})];
  cidrs.onChange(() => {
    for (const vm of caches.vms.list()) runners.vm.enqueue(objectKey(vm.metadata));
    for (const ip of caches.vmips.list()) runners.vmip.enqueue(objectKey(ip.metadata));
  });
  // The certificate manager runs beside the reconcilers, on the same leadership (ADR 0006).
  let certificates: RunningCertificates | undefined;
  let usb: UsbReconcilers | undefined;
  const stop = async (): Promise<void> => {
    stopping.abort();
    await certificates?.done;
    await usb?.stop();
    await Promise.all(everyRunner.map((r) => r.stop()));
    await Promise.all(everyCache.map((c) => c.informer.stop()));
    await cidrs.stop();
  };
  try {
    await cidrs.start(clients, signal, log);
    for (const c of everyCache) c.informer.start();
    await Promise.all(everyCache.map((c) => c.synced));
  } catch (err: unknown) {
    await stop();
    throw err;
  }
  for (const runner of everyRunner) runner.start();
  // USB passthrough (the original's feature gate USB): on its own informers, never delaying the rest.
  if (options.usb ?? (options.config.USB_RECONCILERS && (await resourceApiServed(options.kube, signal, log)))) {
    const hotplug = options.claims ?? subresourceHotplug(options.kube);
    const vm = { vms: caches.vms, nodes: caches.nodes, enqueueVM: (key: string) => runners.vm.enqueue(key), hotplug };
    const started = startUsbReconcilers({ kube: options.kube, signal, log: childLogger({ component: 'usb' }, log), scopes: scopesOf(options.config), vm });
    usb = started;
    // VMs attach their spec.usbDevices once the USB caches are synced (the port stays empty until then).
    // A stop before they synced rejects `synced`: nothing to attach then.
    usbPort.onReady(() => {
      for (const v of caches.vms.list()) if ((v.spec.usbDevices ?? []).length > 0) runners.vm.enqueue(objectKey(v.metadata));
    });
    const vmPort = started.vmPort;
    void started.synced.then(
      () => {
        if (!signal.aborted && vmPort !== undefined) usbPort.set(vmPort);
      },
      () => undefined,
    );
  }
  if (options.config.CERT_ISSUER !== 'off') {
    certificates = runCertificates(options.kube, options.config, signal, childLogger({ component: 'certificates' }, log), options.config.POD_NAME);
  }
  log.info({ namespace: options.config.WATCH_NAMESPACE ?? '*' }, 'caches synced, reconcilers running');
  return { caches, clients, runners, storage, snapshots, resourceMetrics: () => collectResourceMetrics(caches), stop };
}

/** Whether the apiserver serves ResourceSlices (404: no resource.k8s.io/v1, USB stays off); any other answer starts the reconcilers, whose informers retry. */
async function resourceApiServed(kube: KubeClient, signal: AbortSignal, log: Logger): Promise<boolean> {
  try {
    await kube.resource(resourceSliceDescriptor, ResourceSliceSchema, FIELD_MANAGER).listRaw({ fieldSelector: 'metadata.name=usb-reconcilers-probe', signal });
    return true;
  } catch (err: unknown) {
    if (!(err instanceof NotFoundError)) return true;
    log.info('resource.k8s.io/v1 is not served: the USB reconcilers stay off');
    return false;
  }
}

function runnerList(r: Runners): Runner[] {
  return [r.vm, r.vmop, r.vmip, r.lease, r.vmclass];
}

function runnerFactory(signal: AbortSignal, options: StartOptions, log: Logger): (name: string, reconcile: ReconcileFn, count: number) => Runner {
  return (name, reconcile, count) =>
    new Runner({
      name,
      workers: count,
      reconcile,
      signal,
      observe: options.metrics?.observe,
      queueMetrics: options.metrics?.queueMetrics(name, count),
      logger: childLogger({ controller: name }, log),
    });
}

function makeRunners(deps: Deps, signal: AbortSignal, options: StartOptions, log: Logger): Runners {
  const workers = options.config.RECONCILE_WORKERS;
  const runner = runnerFactory(signal, options, log);
  const some = Math.max(1, Math.floor(workers / 2));
  return {
    vm: runner('vm', vmReconciler(deps), workers),
    vmop: runner('vmop', vmopReconciler(deps), some),
    vmip: runner('vmip', vmipReconciler(deps), some),
    lease: runner('vmiplease', leaseReconciler(deps), some),
    vmclass: runner('vmclass', vmClassReconciler(deps), 1),
  };
}
