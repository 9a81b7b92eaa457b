import { join } from 'node:path';
import { metricsGuard } from '../../shared/authz/index.js';
import { startHealthServer, type HealthServer } from '../../shared/daemon/health.js';
import { untilAborted, type KubeClient } from '../../shared/kube/index.js';
import { childLogger, type Logger } from '../../shared/log/index.js';
import type { DraConfig } from './config.js';
import { allocatableDevices, sliceDevice, usbDeviceName } from './devices.js';
import type { UsbDeviceInfo } from './discovery/index.js';
import {
  NodeSchema,
  PodNodeSchema,
  ResourceClaimSchema,
  ResourceSliceSchema,
  nodeDescriptor,
  podDescriptor,
  resourceClaimDescriptor,
  resourceSliceDescriptor,
} from '../../shared/api/k8s/resource.js';
import { DraMetrics } from './metrics.js';
import { DeviceMonitor } from './monitor.js';
import { CdiDir } from './plugin/cdi.js';
import { ClaimCache } from './plugin/claims.js';
import { Checkpoint } from './plugin/checkpoint.js';
import { Preparer } from './plugin/prepare.js';
import { startKubeletPlugin, type KubeletPlugin } from './plugin/server.js';
import { SlicePublisher } from './publisher.js';
import { stateLayout } from './state/layout.js';
import { ClaimImportAuthorizer, startUsbipGateway, type GatewayOptions, type UsbipGateway } from './usbip/index.js';
import { RemoteImports } from './usbip/remote.js';

export const FIELD_MANAGER = 'virtualization-dra';

export interface DaemonOptions {
  config: DraConfig;
  kube: KubeClient;
  /** Stops the daemon (SIGTERM/SIGINT in the process). */
  signal: AbortSignal;
  logger?: Logger;
  /** The USB/IP gateway's kernel side instead of the one USBIP_KERNEL names (tests: a SIMULATED kernel that outlives a restart). */
  usbipKernel?: GatewayOptions['kernel'];
}

export interface DaemonHandle {
  readonly metrics: DraMetrics;
  readonly monitor: DeviceMonitor;
  readonly publisher: SlicePublisher;
  readonly preparer: Preparer;
  /** The USB/IP gateway, once started (USBIP_ENABLED). */
  usbip(): UsbipGateway | undefined;
  /** Where prepares read their claims (informer cache, GET on a miss). */
  readonly claims: ClaimCache;
  /** The kubelet plugin, once it serves. */
  plugin(): KubeletPlugin | undefined;
  /** The health and metrics server, once it listens. */
  readonly health: Promise<HealthServer>;
  /** Resolves once the first scan is done (and handed to the publisher); rejects when sysfs cannot be read. */
  readonly started: Promise<void>;
  /** Resolves when the daemon has stopped (slices removed unless configured otherwise). */
  readonly done: Promise<void>;
  /** The devices of the last scan. */
  devices(): readonly UsbDeviceInfo[];
  ready(): boolean;
}

/**
 * One node's DRA driver: the health server, the sysfs monitor publishing ResourceSlices on every
 * change, the kubelet plugin (after the first scan, so a prepare sees the devices), the periodic
 * resync, until the signal aborts; then the plugin's sockets and the slices are removed.
 */
export function runDaemon(options: DaemonOptions): DaemonHandle {
  const { config, kube, signal } = options;
  const log = options.logger ?? childLogger({ component: 'virtualization-dra', node: config.NODE_NAME });
  const metrics = new DraMetrics();
  let devices: UsbDeviceInfo[] = [];
  let byName = new Map<string, UsbDeviceInfo>();
  let published = false;
  let plugin: KubeletPlugin | undefined;
  let usbip: UsbipGateway | undefined;
  let remote: RemoteImports | undefined;
  const publisher = new SlicePublisher({
    slices: kube.resource(resourceSliceDescriptor, ResourceSliceSchema, FIELD_MANAGER),
    nodes: kube.resource(nodeDescriptor, NodeSchema, FIELD_MANAGER),
    driver: config.DRIVER_NAME,
    nodeName: config.NODE_NAME,
    log,
  });
  const publish = async (force: boolean): Promise<void> => {
    try {
      const result = await publisher.publish(
        allocatableDevices(devices).map((d) => sliceDevice(d, config.NODE_NAME)),
        { force, signal },
      );
      metrics.publishes.inc({ result: result.changed ? 'changed' : 'resync' });
      metrics.poolGeneration.set(undefined, result.generation);
      published = true;
    } catch (err: unknown) {
      metrics.publishes.inc({ result: 'failed' });
      throw err;
    }
  };
  const monitor = new DeviceMonitor({
    sysRoot: config.SYS_ROOT,
    debounceMs: config.RESCAN_DEBOUNCE,
    pollMs: config.RESCAN_INTERVAL,
    log,
    onScan: (scan, ms) => {
      metrics.scans.inc();
      metrics.scanDuration.observe(undefined, ms / 1000);
      metrics.skippedEntries.set(undefined, scan.skipped.length);
    },
    onChange: async (found) => {
      devices = found;
      byName = new Map(allocatableDevices(found).map((d) => [usbDeviceName(d, config.NODE_NAME), d]));
      metrics.devices.set(undefined, allocatableDevices(found).length);
      log.info({ devices: found.map((d) => `${d.busId} ${d.vendorId}:${d.productId}`) }, 'USB devices changed');
      await publish(false);
    },
  });
  const claims = new ClaimCache({
    client: kube.resource(resourceClaimDescriptor, ResourceClaimSchema, FIELD_MANAGER),
    driver: config.DRIVER_NAME,
    nodeName: config.NODE_NAME,
    signal,
    log,
    reads: metrics.claimReads,
  });
  const preparer = new Preparer({
    driver: config.DRIVER_NAME,
    nodeName: config.NODE_NAME,
    claims,
    devices: () => byName,
    cdi: new CdiDir(config.CDI_ROOT),
    // Versions before STATE_DIR kept it beside the DRA socket, on disk (it outlived a reboot).
    checkpoint: new Checkpoint(stateLayout(config.STATE_DIR).checkpoint, log, join(config.KUBELET_PLUGINS_DIR, config.DRIVER_NAME, 'checkpoint.json')),
    log,
    metrics,
    remote: () => remote,
  });
  const ready = (): boolean => published && plugin !== undefined && !signal.aborted;
  const health = startHealthServer(config.HEALTH_HOST, config.HEALTH_PORT, {
    ready,
    metrics: () => metrics.registry.expose(),
    metricsGuard: metricsGuard(config, kube, log.child({ component: 'metrics-auth' })),
  });

  let resync: NodeJS.Timeout | undefined;
  const started = (async (): Promise<void> => {
    log.info({ healthPort: (await health).port, sysRoot: config.SYS_ROOT, driver: config.DRIVER_NAME }, 'started: health and metrics served');
    await monitor.start();
    if (config.USBIP_ENABLED) {
      // The server answers from the monitor's last scan, not a sysfs scan per request.
      usbip = await startUsbipGateway({
        config,
        log,
        registry: metrics.registry,
        nodes: kube.resource(nodeDescriptor, NodeSchema, FIELD_MANAGER),
        scan: () => Promise.resolve({ devices, skipped: [], ignored: [] }),
        kernel: options.usbipKernel,
        // An import only for the node of a claim holding the device (claims, pods, nodes read per import).
        authorizer: new ClaimImportAuthorizer({
          driver: config.DRIVER_NAME,
          nodeName: config.NODE_NAME,
          deviceName: (busId) => [...byName].find(([, d]) => d.busId === busId)?.[0],
          claims: kube.resource(resourceClaimDescriptor, ResourceClaimSchema, FIELD_MANAGER),
          pods: kube.resource(podDescriptor, PodNodeSchema, FIELD_MANAGER),
          nodes: kube.resource(nodeDescriptor, NodeSchema, FIELD_MANAGER),
        }),
      });
      // Devices of other pools are imported at prepare; slices and nodes are read then (no cache).
      remote = new RemoteImports({
        driver: config.DRIVER_NAME,
        nodeName: config.NODE_NAME,
        importer: usbip.importer,
        kernel: usbip.kernel.import,
        slices: kube.resource(resourceSliceDescriptor, ResourceSliceSchema, FIELD_MANAGER),
        nodes: kube.resource(nodeDescriptor, NodeSchema, FIELD_MANAGER),
      });
    }
    await preparer.start();
    // Claims are read from this cache once it has listed them (a GET until then, and on any miss). A
    // claim allocated here gets its address annotation as soon as it is seen, ahead of kubelet's
    // prepare (after the checkpoint is loaded: a prepared claim has it already).
    claims.onAllocated(
      (claim) => preparer.annotateAhead(claim),
      (uid) => preparer.forgetAhead(uid),
    );
    claims.start();
    if (signal.aborted) return;
    plugin = await startKubeletPlugin({
      driver: config.DRIVER_NAME,
      pluginsDir: config.KUBELET_PLUGINS_DIR,
      registryDir: config.KUBELET_REGISTRY_DIR,
      preparer,
      log,
      metrics,
    });
    resync = setInterval(() => {
      void publish(true).catch((err: unknown) => log.warn({ err }, 'ResourceSlice resync failed; retried at the next one'));
    }, config.RESYNC_INTERVAL);
  })();

  const done = (async (): Promise<void> => {
    try {
      await Promise.race([started, untilAborted(signal)]);
      await untilAborted(signal);
    } finally {
      // A stop during start-up tears down what start-up made, so it waits for start-up to end: else a
      // kubelet plugin or monitor started after this point would keep serving (and the process alive).
      await started.catch(() => undefined);
      clearInterval(resync);
      await plugin?.close();
      await claims.stop();
      await usbip?.close();
      await monitor.stop();
      if (config.REMOVE_SLICES_ON_EXIT) {
        try {
          const removed = await publisher.removeAll();
          log.info({ removed }, 'ResourceSlices removed');
        } catch (err: unknown) {
          log.warn({ err }, 'could not remove the ResourceSlices (kubelet removes them once the plugin is gone)');
        }
      }
      await (await health).close();
    }
  })();
  return { metrics, monitor, publisher, preparer, usbip: () => usbip, claims, plugin: () => plugin, health, started, done, devices: () => devices, ready };
}
