/**
 * The USB/IP gateway's node annotations (written by the DRA daemon on its Node, read by the
 * controller before it attaches a device of another node to a VM) and the free-port check of the
 * original (`pkg/common/usb/availability.go`): each vhci hub has half of `usbip-total-ports`; a device
 * needs a port on the hub of its speed.
 */
export const USBIP_ADDRESS_ANNOTATION = 'usb.virtualization.deckhouse.io/usbip-address';
export const USBIP_TOTAL_PORTS_ANNOTATION = 'usb.virtualization.deckhouse.io/usbip-total-ports';
export const USBIP_USED_PORTS_ANNOTATION = 'usb.virtualization.deckhouse.io/usbip-used-ports';
export const USBIP_HS_USED_ANNOTATION = 'usb.virtualization.deckhouse.io/usbip-high-speed-hub-used-ports';
export const USBIP_SS_USED_ANNOTATION = 'usb.virtualization.deckhouse.io/usbip-super-speed-hub-used-ports';

export type UsbipHub = 'hs' | 'ss';

/** The vhci hub a device of this speed (Mbit/s, the slice attribute) attaches to: SuperSpeed from 5000 up, else high-speed. */
export function usbipHubFor(speedMbps: number | undefined): UsbipHub {
  return (speedMbps ?? 0) >= 5000 ? 'ss' : 'hs';
}

const count = (text: string | undefined): number | undefined => (text !== undefined && /^\d{1,6}$/.test(text) ? Number(text) : undefined);

/** The node annotations usbipPortFree reads (a cache of nodes may keep only these). */
export const USBIP_PORT_ANNOTATIONS: ReadonlySet<string> = new Set([USBIP_TOTAL_PORTS_ANNOTATION, USBIP_HS_USED_ANNOTATION, USBIP_SS_USED_ANNOTATION]);

/**
 * Whether a node has a free vhci port for one more device of this speed, from its annotations:
 * `free`, or why it cannot be told (`unknown`: the node advertises no or malformed USB/IP ports).
 */
export function usbipPortFree(annotations: Readonly<Record<string, string>> | undefined, speedMbps: number | undefined): 'free' | 'full' | 'unknown' {
  const total = count(annotations?.[USBIP_TOTAL_PORTS_ANNOTATION]);
  const hub = usbipHubFor(speedMbps);
  const used = count(annotations?.[hub === 'ss' ? USBIP_SS_USED_ANNOTATION : USBIP_HS_USED_ANNOTATION]);
  if (total === undefined || used === undefined) return 'unknown';
  return used + 1 <= Math.floor(total / 2) ? 'free' : 'full';
}
