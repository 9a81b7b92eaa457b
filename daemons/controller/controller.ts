import { setMaxListeners } from 'node:events';
import { ResourceSliceSchema, resourceSliceDescriptor } from '../../shared/api/k8s/resource.js';
import { NotFoundError } from '../../shared/errors/index.js';
import { EventRecorder, eventDescriptor, eventSchema, type KubeClient } from '../../shared/kube/index.js';
import { ModuleConfigCidrs } from '../../shared/kube/module-config-cidrs.js';
import { childLogger, type Logger } from '../../shared/log/index.js';
import { assemble, type MakeRunner } from './assemble.js';
import { makeCaches } from './caches.js';
import { runCertificates, type RunningCertificates } from './certificates/run.js';
import type { ControllerConfig } from './config.js';
import type { Features, Ports, ReconcilerDeclaration, Wiring } from './declaration.js';
import type { Caches, Deps } from './deps.js';
import { ReadyPort } from './engine/ready-port.js';
import { Runner } from './engine/runner.js';
import { launcherPods } from './kube/launcher.js';
import { coreEvents, FIELD_MANAGER, makeClients, REPORTING_CONTROLLER, type Clients } from './kube/resources.js';
import { collectResourceMetrics } from './metrics/collect.js';
import type { ControllerMetrics } from './metrics/runtime.js';
import { reconcilers } from './reconcilers/index.js';
import { volumeSnapshotsServed } from './reconcilers/snapshot/parts.js';
import { kubeVirtConfigParts, kubeVirtConfigServed, noKubeVirtConfig } from './reconcilers/kubevirt-config/parts.js';
import { usbParts } from './reconcilers/usb/parts.js';

export interface StartOptions extends Ports {
  kube: KubeClient;
  config: ControllerConfig;
  /** Aborts when leadership is lost or the process stops: every reconcile and write ends at once. */
  signal: AbortSignal;
  metrics?: ControllerMetrics;
  logger?: Logger;
  /** The reconcilers to run (default: all of reconcilers/index.ts; tests run fewer). */
  reconcilers?: readonly ReconcilerDeclaration[];
  /** Run the USB reconcilers; default: USB_RECONCILERS, when resource.k8s.io/v1 is served. */
  usb?: boolean;
  /** Whether the cluster serves snapshot.storage.k8s.io/v1 VolumeSnapshots; probed by default. */
  volumeSnapshots?: boolean;
}

/** The reconcilers of a leader, running. */
export interface RunningController {
  readonly caches: Caches;
  readonly clients: Clients;
  /** Each reconciler's runner, by its declared name. */
  readonly runners: ReadonlyMap<string, Runner>;
  /** Resolves once every reconciler runs, the late ones (USB) too; rejects when stopped before. */
  readonly everyRunning: Promise<void>;
  /** The resource gauges (d8_virtualization_*) from the caches, in the text format. */
  resourceMetrics(): Promise<string>;
  /** Stop the workers, then the informers; resolves when nothing runs any more. */
  stop(): Promise<void>;
}

/**
 * Start every declared reconciler: informers list and watch, the caches sync, then the workers begin.
 * All of it stops when `signal` aborts (leadership lost) or on stop().
 */
export async function startController(options: StartOptions): Promise<RunningController> {
  const { kube, config } = options;
  const log = options.logger ?? childLogger({ component: 'controller' });
  const stopping = new AbortController();
  const signal = AbortSignal.any([options.signal, stopping.signal]);
  // Every informer, runner and in-flight request listens on it.
  setMaxListeners(0, signal);
  const clients = makeClients(kube);
  const caches = makeCaches(clients, config, signal, log);
  const cidrs = new ModuleConfigCidrs(config.VIRTUAL_MACHINE_CIDRS);
  const features = await probeFeatures(options, signal, log);
  const events = new EventRecorder({
    events: kube.resource(eventDescriptor, eventSchema, FIELD_MANAGER),
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: config.POD_NAME,
    logger: log,
  });
  const deps = (w: Wiring): Deps => ({
    clients,
    caches,
    config,
    cidrs,
    launcher: options.launcher ?? launcherPods(clients.pods, coreEvents(kube)),
    // USB passthrough's side of the VM reconciler: fills once the USB caches sync.
    usb: features.usb ? w.shared(usbParts).vmPort : new ReadyPort(),
    kubevirt: features.kubevirtConfig ? w.shared(kubeVirtConfigParts).port : noKubeVirtConfig,
    events,
  });
  const runner: MakeRunner = (name, reconcile, workers) =>
    new Runner({
      name,
      workers,
      reconcile,
      signal,
      observe: options.metrics?.observe,
      queueMetrics: options.metrics?.queueMetrics(name, workers),
      logger: childLogger({ controller: name }, log),
    });
  const ports: Ports = options;
  const assembly = assemble(options.reconcilers ?? reconcilers, { kube, config, signal, log, features, ports, clients, caches, cidrs, deps }, runner);
  // The certificate manager runs beside the reconcilers, on the same leadership (ADR 0006).
  let certificates: RunningCertificates | undefined;
  const stop = async (): Promise<void> => {
    stopping.abort();
    await certificates?.done;
    await assembly.stop();
    await cidrs.stop();
  };
  try {
    await cidrs.start(clients, signal, log);
    await assembly.start();
  } catch (err: unknown) {
    await stop();
    throw err;
  }
  if (config.CERT_ISSUER !== 'off') certificates = runCertificates(kube, config, signal, childLogger({ component: 'certificates' }, log), config.POD_NAME);
  log.info({ namespace: config.WATCH_NAMESPACE ?? '*', reconcilers: [...assembly.runners.keys()] }, 'caches synced, reconcilers running');
  return { caches, clients, runners: assembly.runners, everyRunning: assembly.everyRunning, resourceMetrics: () => collectResourceMetrics(caches), stop };
}

/** What the config turns on and the cluster serves, asked once before anything is built. */
async function probeFeatures(options: StartOptions, signal: AbortSignal, log: Logger): Promise<Features> {
  const storage = options.config.STORAGE_RECONCILERS;
  return {
    storage,
    volumeSnapshots: storage && (options.volumeSnapshots ?? (await volumeSnapshotsServed(options.kube, signal, log))),
    usb: options.usb ?? (options.config.USB_RECONCILERS && (await resourceApiServed(options.kube, signal, log))),
    kubevirtConfig: await kubeVirtConfigServed(options.kube, options.config, signal, log),
  };
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
