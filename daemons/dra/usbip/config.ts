/**
 * USB/IP keys of the DRA daemon's environment: a zod shape spread into its config schema (one parse,
 * one frozen object), plus reading the shared secret once at start.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { env } from '../../../shared/config/index.js';
import { parseSecret } from './auth.js';
import { USBIP_DEFAULT_PORT } from './protocol.js';

export const usbipConfigShape = {
  USBIP_ENABLED: env.bool(false).describe('Run the USB/IP export server and import side (forwarding USB devices to VMs on other nodes).'),
  USBIP_HOST: env.string('0.0.0.0').describe('Address the USB/IP server listens on (host network: restrict to the node network address where possible).'),
  USBIP_PORT: env.port(USBIP_DEFAULT_PORT).describe("TCP port of the USB/IP server (the kernel tools' default 3240); 0 picks a free one."),
  USBIP_SECRET_FILE: env
    .optionalString()
    .refine((p) => p === undefined || p.startsWith('/'), 'must be an absolute path')
    .describe(
      'File with the cluster-wide shared secret (>= 32 bytes) nodes prove before any USB/IP byte; unset = no authentication (tests, local platform only).',
    ),
  USBIP_ANONYMOUS_DEVLIST: env
    .bool(false)
    .describe('Answer device lists to peers without the handshake (the stock `usbip list -r`); imports always need it when a secret is set.'),
  USBIP_REQUEST_TIMEOUT: env.duration('10s').describe('A peer must complete the handshake and its request (and answer ours) within this long.'),
  USBIP_ADVERTISE_HOST: env
    .optionalString()
    .describe(
      "Address other nodes reach this node's USB/IP server at (the DaemonSet sets status.hostIP); published with USBIP_PORT in the node annotation usb.virtualization.deckhouse.io/usbip-address. Unset: this node exports nothing to others.",
    ),
  USBIP_KERNEL: z
    .enum(['sysfs', 'simulated'])
    .default('sysfs')
    .describe(
      'sysfs: the usbip-host and vhci-hcd modules through sysfs (a real node); simulated: FakeKernelExport/FakeKernelImport in memory (local platform, tests; no device is really forwarded).',
    ),
  USBIP_MARK_INTERVAL: env
    .duration('5s')
    .describe("Re-read the vhci ports and update this node's USB/IP labels and annotations this often (only changes are written)."),
} as const;

export type UsbipConfig = Readonly<{ [K in keyof typeof usbipConfigShape]: z.infer<(typeof usbipConfigShape)[K]> }>;

/** The secret's bytes, or undefined when none is configured; a short or unreadable secret throws. */
export async function loadSecret(config: Pick<UsbipConfig, 'USBIP_SECRET_FILE'>): Promise<Buffer | undefined> {
  const path = config.USBIP_SECRET_FILE;
  if (path === undefined) return undefined;
  return parseSecret(await readFile(path), `USBIP_SECRET_FILE ${path}`);
}
