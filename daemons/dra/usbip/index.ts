/**
 * USB/IP gateway of the DRA daemon, composed: the export server (server.ts), the import side
 * (importer.ts) and the node marks (gateway.ts) written to this node's Node object. The DRA daemon
 * calls startUsbipGateway once when USBIP_ENABLED and closes it on shutdown.
 */
import type { Registry } from '../../../shared/metrics/index.js';
import type { Logger } from '../../../shared/log/index.js';
import { errorMessage } from '../../../shared/errors/index.js';
import type { ResourceClient } from '../../../shared/kube/index.js';
import type { ScanResult } from '../discovery/index.js';
import { stateLayout } from '../state/layout.js';
import type { Node } from '../../../shared/api/k8s/resource.js';
import type { ImportAuthorizer } from './authorize.js';
import { loadSecret, type UsbipConfig } from './config.js';
import { FakeKernelExport } from './fake-kernel-export.js';
import { FakeKernelImport } from './fake-kernel-import.js';
import { nodeMarks, type NodeMarks } from './gateway.js';
import { UsbipImporter } from './importer.js';
import { SysfsKernelExport, type KernelExport } from './kernel-export.js';
import { SysfsKernelImport, type KernelImport } from './kernel-import.js';
import { UsbipMetrics } from './metrics.js';
import { AttachmentStore } from './records.js';
import { startUsbipServer, type UsbipServer } from './server.js';

export { startUsbipServer, type UsbipServer, type UsbipServerOptions } from './server.js';
export { UsbipImporter, NoFreePortError, type AttachRequest } from './importer.js';
export { planDevices, nodeMarks, parseAddress, type DevicePlan, type AllocatedDevice, type PublishedDevice } from './gateway.js';
export { usbipConfigShape, type UsbipConfig } from './config.js';
export { prepareRemote, unprepareRemote, type PreparedDevice } from './prepare.js';
export { UsbipProtocolError } from './protocol.js';
export { ClaimImportAuthorizer, type ImportAuthorizer, type ImportDecision, type ImportDenial, type ImportRequest } from './authorize.js';

export interface GatewayOptions {
  readonly config: UsbipConfig & { readonly SYS_ROOT: string; readonly NODE_NAME: string; readonly STATE_DIR: string };
  readonly log: Logger;
  readonly registry: Registry;
  /** Where the node marks go; undefined = not written (tests). */
  readonly nodes?: ResourceClient<Node> | undefined;
  /** The device scan the server answers from (default: a fresh sysfs scan per request). */
  readonly scan?: (sysRoot: string) => Promise<ScanResult>;
  /**
   * The kernel side to use instead of the one USBIP_KERNEL names (tests: a SIMULATED kernel that
   * outlives a restart of the daemon, as the real one does).
   */
  readonly kernel?: { readonly export: KernelExport; readonly import: KernelImport } | undefined;
  /** Who may import which device (the DRA daemon: ClaimImportAuthorizer); undefined = any authenticated peer. */
  readonly authorizer?: ImportAuthorizer | undefined;
}

export interface UsbipGateway {
  readonly server: UsbipServer;
  readonly importer: UsbipImporter;
  readonly kernel: { readonly export: KernelExport; readonly import: KernelImport };
  /** Re-read the vhci ports and write the node marks if they changed (also runs on a timer). */
  mark(): Promise<NodeMarks | undefined>;
  close(): Promise<void>;
}

export async function startUsbipGateway(opts: GatewayOptions): Promise<UsbipGateway> {
  const { config } = opts;
  const log = opts.log.child({ component: 'usbip' });
  const simulated = config.USBIP_KERNEL === 'simulated';
  if (simulated) log.warn('USB/IP kernel side SIMULATED (FakeKernelExport, FakeKernelImport): nothing is really forwarded');
  const kernel =
    opts.kernel ??
    (simulated
      ? { export: new FakeKernelExport(), import: new FakeKernelImport() }
      : { export: new SysfsKernelExport(config.SYS_ROOT), import: new SysfsKernelImport(config.SYS_ROOT) });
  const secret = await loadSecret(config);
  const metrics = new UsbipMetrics(opts.registry);
  const importer = new UsbipImporter({
    kernel: kernel.import,
    store: new AttachmentStore(stateLayout(config.STATE_DIR).usbipAttachments),
    log,
    secret,
    timeoutMs: config.USBIP_REQUEST_TIMEOUT,
    metrics,
  });
  await importer.start();
  const server = await startUsbipServer({
    host: config.USBIP_HOST,
    port: config.USBIP_PORT,
    sysRoot: config.SYS_ROOT,
    kernel: kernel.export,
    log,
    secret,
    anonymousDevlist: config.USBIP_ANONYMOUS_DEVLIST,
    requestTimeoutMs: config.USBIP_REQUEST_TIMEOUT,
    metrics,
    authorizer: opts.authorizer,
    ...(opts.scan === undefined ? {} : { scan: opts.scan }),
  });
  const address =
    config.USBIP_ADVERTISE_HOST === undefined
      ? ''
      : `${config.USBIP_ADVERTISE_HOST.includes(':') ? `[${config.USBIP_ADVERTISE_HOST}]` : config.USBIP_ADVERTISE_HOST}:${server.port}`;
  let last = '';
  const mark = async (): Promise<NodeMarks | undefined> => {
    const marks = nodeMarks({ nodeName: config.NODE_NAME, address, ports: await kernel.import.ports() });
    const key = JSON.stringify(marks);
    if (key === last || opts.nodes === undefined) return marks;
    await opts.nodes.mergePatch({ name: config.NODE_NAME }, { metadata: { labels: marks.labels, annotations: marks.annotations } });
    last = key;
    log.info({ labels: marks.labels }, 'node USB/IP marks updated');
    return marks;
  };
  const tick = (): void => {
    void mark().catch((err: unknown) => log.warn({ err: errorMessage(err) }, 'could not update the node USB/IP marks; retried at the next tick'));
  };
  tick();
  const timer = setInterval(tick, config.USBIP_MARK_INTERVAL);
  timer.unref();
  return {
    server,
    importer,
    kernel,
    mark,
    close: async () => {
      clearInterval(timer);
      await server.close();
    },
  };
}
