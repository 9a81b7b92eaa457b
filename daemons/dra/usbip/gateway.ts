/**
 * Pure decisions of the USB/IP gateway (facts: deckhouse-aux-components 2.11):
 * - planDevices: from a ResourceClaim's allocation (as kubelet passes it to NodePrepareResources) to
 *   what this node does per device: use it locally (pool = this node), import it from the node whose
 *   pool it is (that node exports), or refuse with a reason. Every device gets a result.
 * - nodeMarks: the labels and annotations a node publishes about its vhci ports, so the scheduler
 *   places VMs with remote devices on nodes that can still attach them.
 */
import { VDEV_ST_NULL, VDEV_ST_USED, type VhciHub, type VhciPort } from './kernel-import.js';

import {
  USBIP_ADDRESS_ANNOTATION as ADDRESS_ANNOTATION,
  USBIP_HS_USED_ANNOTATION as HS_USED_ANNOTATION,
  USBIP_SS_USED_ANNOTATION as SS_USED_ANNOTATION,
  USBIP_TOTAL_PORTS_ANNOTATION as TOTAL_PORTS_ANNOTATION,
  USBIP_USED_PORTS_ANNOTATION as USED_PORTS_ANNOTATION,
  usbipHubFor,
} from '../../../shared/api/usbip.js';

// The node annotations are shared with the controller (it checks free ports before attaching).
export { ADDRESS_ANNOTATION, HS_USED_ANNOTATION, SS_USED_ANNOTATION, TOTAL_PORTS_ANNOTATION, USED_PORTS_ANNOTATION };
export const GATEWAY_LABEL = 'virtualization.deckhouse.io/usb-gateway';
/** Short twin of GATEWAY_LABEL: Cilium ignores node labels under virtualization.deckhouse.io/. */
export const GATEWAY_SHORT_LABEL = 'usb-gateway';
export const GATEWAY_NODE_LABEL = 'virtualization.deckhouse.io/usb-gateway-node';
export const HS_FREE_LABEL = 'virtualization.deckhouse.io/usb-gateway-high-speed';
export const SS_FREE_LABEL = 'virtualization.deckhouse.io/usb-gateway-super-speed';

/** One entry of `claim.status.allocation.devices.results` (what NodePrepareResources gets). */
export interface AllocatedDevice {
  readonly request: string;
  readonly driver: string;
  readonly pool: string;
  readonly device: string;
}

/** A published device of some pool (from the driver's ResourceSlices). */
export interface PublishedDevice {
  readonly pool: string;
  readonly name: string;
  readonly attributes: Readonly<Record<string, { string?: string; int?: number } | undefined>>;
}

export type DevicePlan =
  | { readonly kind: 'local'; readonly device: string }
  | {
      readonly kind: 'import';
      readonly device: string;
      readonly exportNode: string;
      readonly host: string;
      readonly port: number;
      readonly busId: string;
      readonly hub: VhciHub;
    }
  | { readonly kind: 'refuse'; readonly device: string; readonly reason: string };

export interface PlanInput {
  readonly nodeName: string;
  readonly driver: string;
  readonly results: readonly AllocatedDevice[];
  readonly published: readonly PublishedDevice[];
  /** Node name -> its usbip-address annotation (`host:port`). */
  readonly addresses: ReadonlyMap<string, string>;
  /** This node's vhci ports now. */
  readonly ports: readonly VhciPort[];
  /** Devices already attached here (by device name): they need no new port. */
  readonly attached: ReadonlySet<string>;
}

/** `host:port` with an IPv4/IPv6 address or a DNS name and a port 1..65535. */
export function parseAddress(text: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(text.trim());
  const port = Number(m?.[3]);
  const host = m?.[1] ?? m?.[2];
  if (host === undefined || !(port >= 1 && port <= 65535)) return undefined;
  return { host, port };
}

export function planDevices(input: PlanInput): DevicePlan[] {
  const free: Record<VhciHub, number> = { hs: 0, ss: 0 };
  for (const p of input.ports) if (p.status === VDEV_ST_NULL) free[p.hub]++;
  const seen = new Set<string>();
  const plans: DevicePlan[] = [];
  for (const r of input.results) {
    if (r.driver !== input.driver || seen.has(r.device)) continue;
    seen.add(r.device);
    if (r.pool === input.nodeName) {
      plans.push({ kind: 'local', device: r.device });
      continue;
    }
    const refuse = (reason: string): void => void plans.push({ kind: 'refuse', device: r.device, reason });
    const published = input.published.find((d) => d.pool === r.pool && d.name === r.device);
    if (published === undefined) {
      refuse(`device ${r.device} is not published in pool ${r.pool} (unplugged, or its node is gone)`);
      continue;
    }
    const busId = published.attributes['busID']?.string;
    if (busId === undefined || busId === '') {
      refuse(`device ${r.device} of pool ${r.pool} has no busID attribute`);
      continue;
    }
    const annotation = input.addresses.get(r.pool);
    const address = annotation === undefined ? undefined : parseAddress(annotation);
    if (address === undefined) {
      refuse(
        annotation === undefined
          ? `node ${r.pool} advertises no USB/IP address (annotation ${ADDRESS_ANNOTATION})`
          : `node ${r.pool} advertises an invalid USB/IP address ${JSON.stringify(annotation)}`,
      );
      continue;
    }
    // The slice attribute `speed` is in Mbit/s; SuperSpeed (5000 and up) needs the ss hub.
    const hub: VhciHub = usbipHubFor(published.attributes['speed']?.int);
    if (!input.attached.has(r.device)) {
      if (free[hub] === 0) {
        refuse(`no free vhci port on the ${hub === 'ss' ? 'SuperSpeed' : 'high-speed'} hub of node ${input.nodeName}`);
        continue;
      }
      free[hub]--;
    }
    plans.push({ kind: 'import', device: r.device, exportNode: r.pool, host: address.host, port: address.port, busId, hub });
  }
  return plans;
}

export interface NodeMarks {
  /** Labels to set; `null` = remove. */
  readonly labels: Readonly<Record<string, string | null>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/**
 * What a gateway node says about itself. `usb-gateway-node` is `any` while a port is free (on both
 * hubs, or on either when `partitionable`), else the node's own name (only devices already here).
 * HS/SS labels are present only while that hub has a free port.
 */
export function nodeMarks(input: { nodeName: string; address: string; ports: readonly VhciPort[]; partitionable?: boolean }): NodeMarks {
  const freeOn = (hub: VhciHub): boolean => input.ports.some((p) => p.hub === hub && p.status === VDEV_ST_NULL);
  const usedOn = (hub: VhciHub): number => input.ports.filter((p) => p.hub === hub && p.status === VDEV_ST_USED).length;
  const hs = freeOn('hs');
  const ss = freeOn('ss');
  const capacity = input.partitionable === true ? hs || ss : hs && ss;
  return {
    labels: {
      [GATEWAY_LABEL]: 'true',
      [GATEWAY_SHORT_LABEL]: 'true',
      [GATEWAY_NODE_LABEL]: capacity ? 'any' : input.nodeName,
      [HS_FREE_LABEL]: hs ? 'true' : null,
      [SS_FREE_LABEL]: ss ? 'true' : null,
    },
    annotations: {
      [ADDRESS_ANNOTATION]: input.address,
      [TOTAL_PORTS_ANNOTATION]: String(input.ports.length),
      [USED_PORTS_ANNOTATION]: String(usedOn('hs') + usedOn('ss')),
      [HS_USED_ANNOTATION]: String(usedOn('hs')),
      [SS_USED_ANNOTATION]: String(usedOn('ss')),
    },
  };
}
