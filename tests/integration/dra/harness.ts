/**
 * What the DRA integration tests share: a fixture node (sysfs tree, kubelet dirs, CDI dir in a temp
 * dir, a Node object on the real apiserver) and the daemon started on it in this process.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type DraConfig } from '../../../daemons/dra/config.js';
import { startController, type RunningController } from '../../../daemons/controller/controller.js';
import { reconcilers } from '../../../daemons/controller/reconcilers/index.js';
import { controllerConfig, SCOPE_LABEL, type Scope } from '../controller/fixtures.js';
import { runDaemon, type DaemonHandle, type DaemonOptions } from '../../../daemons/dra/daemon.js';
import { NodeSchema, ResourceSliceSchema, nodeDescriptor, resourceSliceDescriptor, type ResourceSlice } from '../../../shared/api/k8s/resource.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { childLogger } from '../../../shared/log/index.js';
import { newKubeConfig } from '../../env/index.js';

import { TEST_MANAGER } from './kubelet-client.js';

export { TEST_MANAGER };

export interface FixtureNode {
  name: string;
  dir: string;
  sysRoot: string;
  env: Record<string, string>;
  kube: KubeClient;
  cleanup(): Promise<void>;
}

/** A temp dir with sys/, kubelet dirs and cdi/, and a Node object of a fresh name. */
export async function fixtureNode(prefix: string): Promise<FixtureNode> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  const dir = await mkdtemp(join(tmpdir(), `${prefix}-`));
  const env = {
    NODE_NAME: name,
    SYS_ROOT: join(dir, 'sys'),
    CDI_ROOT: join(dir, 'cdi'),
    KUBELET_PLUGINS_DIR: join(dir, 'plugins'),
    KUBELET_REGISTRY_DIR: join(dir, 'plugins_registry'),
    STATE_DIR: join(dir, 'state'),
    HEALTH_PORT: '0',
    HEALTH_HOST: '127.0.0.1',
    METRICS_AUTH: 'none',
    LOG_LEVEL: 'warn',
  };
  for (const d of ['sys', 'cdi', 'plugins', 'plugins_registry']) await mkdir(join(dir, d), { recursive: true });
  const kube = new KubeClient(newKubeConfig());
  await kube
    .resource(nodeDescriptor, NodeSchema, TEST_MANAGER)
    .create({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } });
  return {
    name,
    dir,
    sysRoot: env.SYS_ROOT,
    env,
    kube,
    cleanup: async () => {
      await kube
        .resource(nodeDescriptor, NodeSchema, TEST_MANAGER)
        .delete({ name })
        .catch((err: unknown) => {
          if (!(err instanceof NotFoundError)) throw err;
        });
      kube.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface RunningDaemon {
  handle: DaemonHandle;
  config: DraConfig;
  stop(): Promise<void>;
}

/** The daemon on the fixture node, with its own apiserver client (admin unless given), until stop(). */
export function startDaemon(
  node: FixtureNode,
  extraEnv: Record<string, string> = {},
  kube: KubeClient = new KubeClient(newKubeConfig()),
  extra: Pick<DaemonOptions, 'usbipKernel'> = {},
): RunningDaemon {
  const config = loadConfig({ ...node.env, ...extraEnv });
  const abort = new AbortController();
  const handle = runDaemon({ ...extra, config, kube, signal: abort.signal, logger: childLogger({ component: 'dra-test', node: node.name }) });
  let stopped: Promise<void> | undefined;
  return {
    handle,
    config,
    stop: () =>
      (stopped ??= (async () => {
        abort.abort();
        await handle.done;
        kube.close();
      })()),
  };
}

/** The daemon's environment with its USB/IP gateway on: kernel side SIMULATED, on 127.0.0.1 (a free port); its attachment records are in the node's STATE_DIR. */
export function gatewayEnv(node: FixtureNode, extra: Record<string, string> = {}): Record<string, string> {
  return {
    USBIP_ENABLED: 'true',
    USBIP_KERNEL: 'simulated',
    USBIP_HOST: '127.0.0.1',
    USBIP_PORT: '0',
    USBIP_ADVERTISE_HOST: '127.0.0.1',
    USBIP_MARK_INTERVAL: '200ms',
    ...extra,
  };
}

/** The node's slices of the driver as the apiserver has them. */
export async function slicesOf(kube: KubeClient, nodeName: string, driver = 'virtualization-usb'): Promise<ResourceSlice[]> {
  const slices = kube.resource(resourceSliceDescriptor, ResourceSliceSchema, TEST_MANAGER);
  return (await slices.list({ fieldSelector: `spec.driver=${driver},spec.nodeName=${nodeName}` })).items;
}

/** Every device of the node's slices at the highest generation, by name. */
export function devicesOf(slices: readonly ResourceSlice[]): Map<string, Record<string, unknown>> {
  const top = Math.max(0, ...slices.map((s) => s.spec.pool.generation));
  const out = new Map<string, Record<string, unknown>>();
  for (const s of slices.filter((x) => x.spec.pool.generation === top)) for (const d of s.spec.devices ?? []) out.set(d.name, d.attributes ?? {});
  return out;
}

/**
 * Put the fixture node in a controller test's cluster scope (the scope label): the USB reconcilers of
 * that scope's controller take its slices, and no other controller does.
 */
export async function labelIntoScope(node: FixtureNode, scope: Scope): Promise<void> {
  await node.kube.resource(nodeDescriptor, NodeSchema, TEST_MANAGER).mergePatch({ name: node.name }, { metadata: { labels: { [SCOPE_LABEL]: scope.id } } });
}

/** The USB reconcilers' names (reconcilers/usb): the flow runs these alone. */
const USB_RECONCILERS = new Set(['usb-resourceslice', 'nodeusbdevice', 'usbdevice']);

/** A fixture node's DRA daemon publishing its devices and the controller's USB reconcilers on them (as `kube`, in `scope` as a test controller's), running. */
export interface UsbFlow {
  readonly daemon: RunningDaemon;
  readonly controller: RunningController;
  stop(): Promise<void>;
}

export async function startUsbFlow(node: FixtureNode, scope: Scope, kube: KubeClient = node.kube): Promise<UsbFlow> {
  const abort = new AbortController();
  await labelIntoScope(node, scope);
  const daemon = startDaemon(node);
  await daemon.handle.started;
  const controller = await startController({
    kube,
    config: controllerConfig(scope),
    signal: abort.signal,
    logger: childLogger({ component: 'usb-test' }),
    usb: true,
    reconcilers: reconcilers.filter((d) => USB_RECONCILERS.has(d.name)),
  });
  await controller.everyRunning;
  return {
    daemon,
    controller,
    stop: async () => {
      abort.abort();
      await controller.stop();
      await daemon.stop();
    },
  };
}
