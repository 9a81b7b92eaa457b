/**
 * The import side as NodePrepareResources uses it: for a claim's allocation results, read what
 * planDevices needs from the apiserver (the driver's ResourceSlices of the other pools, the exporting
 * nodes' `usbip-address` annotations, by GET of each node named), plan, attach the remote devices
 * (prepareRemote) and find where each appeared on this node (KernelImport.deviceNode); detach them
 * again at unprepare (unprepareRemote). A pool's name is its node's name (as this driver publishes).
 */
import { errorMessage, NotFoundError } from '../../../shared/errors/index.js';
import type { ResourceClient } from '../../../shared/kube/index.js';
import type { Node, ResourceSlice } from '../../../shared/api/k8s/resource.js';
import { ADDRESS_ANNOTATION, planDevices, type AllocatedDevice, type DevicePlan, type PublishedDevice } from './gateway.js';
import type { UsbipImporter } from './importer.js';
import type { KernelImport, LocalDeviceNode } from './kernel-import.js';
import { prepareRemote, unprepareRemote } from './prepare.js';

export interface RemoteImportsOptions {
  readonly driver: string;
  readonly nodeName: string;
  readonly importer: UsbipImporter;
  readonly kernel: KernelImport;
  readonly slices: Pick<ResourceClient<ResourceSlice>, 'list'>;
  readonly nodes: Pick<ResourceClient<Node>, 'get'>;
}

/** A remote device attached here, where it appeared, and from where. */
export interface ImportedDevice {
  readonly device: string;
  readonly exportNode: string;
  readonly busId: string;
  readonly node: LocalDeviceNode;
}

export type ImportOutcome = { readonly kind: 'ok'; readonly devices: ImportedDevice[] } | { readonly kind: 'failed'; readonly reasons: string[] };

export class RemoteImports {
  constructor(private readonly opts: RemoteImportsOptions) {}

  /** planDevices on the apiserver's current view (one slice list, one GET per exporting node). */
  async plan(results: readonly AllocatedDevice[]): Promise<DevicePlan[]> {
    const remotePools = [...new Set(results.filter((r) => r.driver === this.opts.driver && r.pool !== this.opts.nodeName).map((r) => r.pool))];
    if (remotePools.length === 0) return planDevices(this.input(results, [], new Map(), [], new Set()));
    const [slices, addresses, ports] = await Promise.all([
      this.opts.slices.list({ fieldSelector: `spec.driver=${this.opts.driver}` }),
      this.addresses(remotePools),
      this.opts.kernel.ports(),
    ]);
    const attached = new Set(this.opts.importer.list().map((r) => r.key));
    return planDevices(this.input(results, publishedDevices(slices.items), addresses, ports, attached));
  }

  /**
   * Attach every `import` plan and find its device node. All or nothing per claim: when one device
   * fails, those attached by this call are detached again and every reason is returned.
   */
  async attach(plans: readonly DevicePlan[]): Promise<ImportOutcome> {
    const refused = plans.flatMap((p) => (p.kind === 'refuse' ? [p.reason] : []));
    if (refused.length > 0) return { kind: 'failed', reasons: refused };
    const imports = plans.filter((p) => p.kind === 'import');
    const before = new Set(this.opts.importer.list().map((r) => r.key));
    const results = await prepareRemote(this.opts.importer, imports);
    const reasons: string[] = [];
    const devices: ImportedDevice[] = [];
    for (const r of results) {
      const plan = imports.find((p) => p.device === r.device);
      if (r.kind === 'failed') reasons.push(r.reason);
      else if (r.kind === 'attached' && plan !== undefined) {
        try {
          devices.push({ device: r.device, exportNode: plan.exportNode, busId: plan.busId, node: await this.opts.kernel.deviceNode(r.record.localBusId) });
        } catch (err: unknown) {
          reasons.push(`device ${r.device} imported on vhci port ${r.record.port} but not found on this node: ${errorMessage(err)}`);
        }
      }
    }
    if (reasons.length === 0) return { kind: 'ok', devices };
    await this.detach(results.filter((r) => r.kind === 'attached' && !before.has(r.device)).map((r) => r.device));
    return { kind: 'failed', reasons };
  }

  /** Detach the devices (by device name); the errors, one per device that could not be detached. */
  async detach(devices: readonly string[]): Promise<string[]> {
    const results = await unprepareRemote(this.opts.importer, devices);
    return results.flatMap((r) => (r.error === undefined ? [] : [`detach of ${r.device}: ${r.error}`]));
  }

  private input(
    results: readonly AllocatedDevice[],
    published: readonly PublishedDevice[],
    addresses: ReadonlyMap<string, string>,
    ports: Awaited<ReturnType<KernelImport['ports']>>,
    attached: ReadonlySet<string>,
  ): Parameters<typeof planDevices>[0] {
    return { nodeName: this.opts.nodeName, driver: this.opts.driver, results, published, addresses, ports, attached };
  }

  /** The usbip-address annotation of each node; a node that is gone or has none is left out. */
  private async addresses(nodes: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    await Promise.all(
      nodes.map(async (name) => {
        try {
          const value = (await this.opts.nodes.get({ name })).metadata.annotations?.[ADDRESS_ANNOTATION];
          if (value !== undefined) out.set(name, value);
        } catch (err: unknown) {
          if (!(err instanceof NotFoundError)) throw err;
        }
      }),
    );
    return out;
  }
}

/** The devices of every pool at its highest generation (older slices are being replaced). */
export function publishedDevices(slices: readonly ResourceSlice[]): PublishedDevice[] {
  const top = new Map<string, number>();
  for (const s of slices) top.set(s.spec.pool.name, Math.max(top.get(s.spec.pool.name) ?? 0, s.spec.pool.generation));
  return slices
    .filter((s) => s.spec.pool.generation === top.get(s.spec.pool.name))
    .flatMap((s) => (s.spec.devices ?? []).map((d) => ({ pool: s.spec.pool.name, name: d.name, attributes: d.attributes ?? {} })));
}
