import { metricsGuard } from '../../shared/authz/index.js';
import { Backoff, Informer, sleep, untilAborted, type KubeClient } from '../../shared/kube/index.js';
import { childLogger, type Logger } from '../../shared/log/index.js';
import { startHealthServer, type HealthServer } from '../../shared/daemon/health.js';
import { ModuleConfigCidrs, ModuleConfigSchema, moduleConfigDescriptor } from '../../shared/kube/module-config-cidrs.js';
import type { RouteForgeConfig } from './config.js';
import { IpRoute2, type Kernel } from './iproute2.js';
import {
  CiliumNodeSchema,
  FIELD_MANAGER,
  RoutedVmSchema,
  routedVmOnly,
  ciliumNodeDescriptor,
  internalIPOf,
  sameVmAddress,
  vmAddressOf,
  vmDescriptor,
  type CiliumNode,
  type RoutedVm,
} from './kube.js';
import { RouteForgeMetrics } from './metrics.js';
import type { VmAddress } from './model.js';
import { Syncer } from './syncer.js';

export interface DaemonOptions {
  config: RouteForgeConfig;
  kube: KubeClient;
  /** Stops the daemon (SIGTERM/SIGINT in the process). */
  signal: AbortSignal;
  /** The kernel port; iproute2 from the config when omitted. */
  kernel?: Kernel;
  logger?: Logger;
}

export interface DaemonHandle {
  readonly metrics: RouteForgeMetrics;
  readonly syncer: Syncer;
  /** The health and metrics server, once it listens. */
  readonly health: Promise<HealthServer>;
  /** Resolves when the daemon has stopped. */
  readonly done: Promise<void>;
  /** Informers synced and one sync done. */
  ready(): boolean;
}

/**
 * One node's route-forge: the health server, the CIDR source, informers on VMs and CiliumNodes, the
 * kernel monitor, then the sync loop, until the signal aborts. Nothing is written before both
 * informers have synced, so the first sync sees every VM and can remove what is stale.
 */
export function runDaemon(options: DaemonOptions): DaemonHandle {
  const { config, kube, signal } = options;
  const log = options.logger ?? childLogger({ component: 'vm-route-forge' });
  const metrics = new RouteForgeMetrics();
  const kernel = options.kernel ?? new IpRoute2({ command: config.IP_COMMAND, netns: config.NETNS });
  const vms = new Map<string, VmAddress>();
  const nodes = new Map<string, string | undefined>();
  const cidrs = new ModuleConfigCidrs(config.VIRTUAL_MACHINE_CIDRS);
  const syncer = new Syncer({
    kernel,
    table: config.ROUTE_TABLE_ID,
    localDevice: config.LOCAL_DEVICE,
    dryRun: config.DRY_RUN,
    inputs: () => ({ vms: [...vms.values()], nodes, cidrs: cidrs.current() }),
    metrics,
    log,
  });
  let started = false;
  const ready = (): boolean => started && syncer.syncs > 0 && !signal.aborted;
  const health = startHealthServer(config.HEALTH_HOST, config.HEALTH_PORT, {
    ready,
    metrics: () => metrics.registry.expose(),
    metricsGuard: metricsGuard(config, kube, log.child({ component: 'metrics-auth' })),
  });

  const vmInformer = new Informer<RoutedVm>({
    client: kube.resource(vmDescriptor, RoutedVmSchema, FIELD_MANAGER),
    ...(config.WATCH_NAMESPACE !== undefined ? { namespace: config.WATCH_NAMESPACE } : {}),
    signal,
    logger: log.child({ informer: 'VirtualMachine' }),
    transform: routedVmOnly,
  });
  const upsertVm = (vm: RoutedVm): void => {
    const address = vmAddressOf(vm);
    if (sameVmAddress(vms.get(address.key), address)) return;
    vms.set(address.key, address);
    syncer.trigger('kube');
  };
  vmInformer.on('add', upsertVm);
  vmInformer.on('update', upsertVm);
  vmInformer.on('delete', (vm) => {
    if (vms.delete(vmAddressOf(vm).key)) syncer.trigger('kube');
  });

  const nodeInformer = new Informer<CiliumNode>({
    client: kube.resource(ciliumNodeDescriptor, CiliumNodeSchema, FIELD_MANAGER),
    signal,
    logger: log.child({ informer: 'CiliumNode' }),
  });
  const upsertNode = (node: CiliumNode): void => {
    const name = node.metadata.name ?? '';
    const ip = internalIPOf(node);
    if (nodes.has(name) && nodes.get(name) === ip) return;
    nodes.set(name, ip);
    syncer.trigger('kube');
  };
  nodeInformer.on('add', upsertNode);
  nodeInformer.on('update', upsertNode);
  nodeInformer.on('delete', (node) => {
    if (nodes.delete(node.metadata.name ?? '')) syncer.trigger('kube');
  });

  const run = async (): Promise<void> => {
    log.info(
      { healthPort: (await health).port, table: config.ROUTE_TABLE_ID, dryRun: config.DRY_RUN, netns: config.NETNS },
      'started: health and metrics served',
    );
    if (config.MODULE_CONFIG_WATCH) {
      cidrs.onChange(() => syncer.trigger('kube'));
      await cidrs.start({ moduleConfigs: kube.resource(moduleConfigDescriptor, ModuleConfigSchema, FIELD_MANAGER) }, signal, log);
    }
    vmInformer.start();
    nodeInformer.start();
    await Promise.all([vmInformer.synced, nodeInformer.synced]);
    log.info({ vms: vms.size, ciliumNodes: nodes.size, cidrs: cidrs.current() }, 'informers synced');
    const monitor = watchKernel(kernel, config.ROUTE_TABLE_ID, syncer, metrics, log, signal);
    await monitor.subscribed;
    started = true;
    syncer.trigger('start');
    const resync = setInterval(() => syncer.trigger('resync'), config.RESYNC_INTERVAL);
    try {
      await syncer.run(signal);
    } finally {
      clearInterval(resync);
      await monitor.done;
    }
  };

  const done = (async (): Promise<void> => {
    try {
      await run();
    } catch (err: unknown) {
      if (!signal.aborted) throw err;
    } finally {
      await Promise.all([vmInformer.stop(), nodeInformer.stop(), cidrs.stop()]);
      await (await health).close();
    }
  })();
  return { metrics, syncer, health, done, ready };
}

/**
 * The kernel monitor for as long as the signal lasts: changes to the dedicated table or its rules,
 * and a device of its routes going down (which flushes them silently), trigger a sync; other route
 * changes a lookup check; when the monitor ends (it should not) it is
 * started again after a backoff and a full sync catches what it missed meanwhile.
 */
function watchKernel(
  kernel: Kernel,
  table: number,
  syncer: Syncer,
  metrics: RouteForgeMetrics,
  log: Logger,
  signal: AbortSignal,
): { subscribed: Promise<void>; done: Promise<void> } {
  let firstSubscribed: () => void = () => undefined;
  const subscribed = new Promise<void>((resolve) => (firstSubscribed = resolve));
  const done = (async (): Promise<void> => {
    const backoff = new Backoff({ initialMs: 200, maxMs: 10_000, jitter: 0.2 });
    while (!signal.aborted) {
      let lost: () => void = () => undefined;
      const ended = new Promise<void>((resolve) => (lost = resolve));
      const since = Date.now();
      try {
        await kernel.watch(
          table,
          (event) => {
            if (event.kind === 'lost') lost();
            else if (event.kind === 'table') syncer.tableChanged(event.route);
            else if (event.kind === 'other') syncer.trigger('routing');
            else if (syncer.usesDevice(event.device)) syncer.trigger('link');
          },
          signal,
        );
      } catch (err: unknown) {
        log.warn({ err }, 'cannot monitor the kernel');
        lost();
      }
      firstSubscribed();
      await Promise.race([ended, untilAborted(signal)]);
      if (signal.aborted) break;
      if (Date.now() - since > 30_000) backoff.reset();
      const delayMs = backoff.next();
      metrics.monitorRestarts.inc();
      log.warn({ delayMs, why: kernel instanceof IpRoute2 ? kernel.lastMonitorExit : undefined }, 'the kernel monitor ended; restarting it, with a full sync');
      syncer.trigger('resync');
      await sleep(delayMs, signal);
    }
    firstSubscribed();
  })();
  return { subscribed, done };
}
