import { z } from 'zod';
import { metricsAuthConfigShape } from '../../shared/authz/metrics.js';
import { env, parseConfig } from '../../shared/config/index.js';
import { DEFAULT_DRIVER_NAME } from './devices.js';
import { usbipConfigShape } from './usbip/config.js';

/** DNS subdomain: the driver name is the `driver` of slices and claims and part of socket paths. */
const driverName = z
  .string()
  .default(DEFAULT_DRIVER_NAME)
  .refine((n) => n.length <= 63 && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(n), 'must be a DNS subdomain of at most 63 characters');
const nodeName = z
  .string({ error: 'is required (the node this daemon runs on; the DaemonSet sets it from spec.nodeName)' })
  .min(1, 'is required (the node this daemon runs on)')
  .max(253)
  .refine((n) => /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(n), 'must be a node name (DNS subdomain)');
const absolutePath = (def: string) =>
  z
    .string()
    .default(def)
    .refine((p) => p.startsWith('/'), 'must be an absolute path');

/** Environment of virtualization-dra: every key documented, with a default. */
export const DraConfigSchema = z.object({
  KUBECONFIG: env.optionalString().describe('Kubeconfig file; in-cluster service account when unset.'),
  NODE_NAME: nodeName.describe('This node (pool name of its ResourceSlices); required.'),
  DRIVER_NAME: driverName.describe('The DRA driver name (the original: virtualization-usb).'),
  SYS_ROOT: absolutePath('/sys').describe('Root of sysfs; USB devices are read from <SYS_ROOT>/bus/usb/devices (fixture trees in tests).'),
  CDI_ROOT: absolutePath('/var/run/cdi').describe('Directory of the generated CDI spec files.'),
  KUBELET_PLUGINS_DIR: absolutePath('/var/lib/kubelet/plugins').describe('The DRA socket is <dir>/<driver>/dra.sock.'),
  STATE_DIR: absolutePath('/var/run/virtualization-dra').describe(
    'Node-local state (state/layout.ts): checkpoint.json of the prepared claims and usb/attach-record.json of the USB/IP imports. Keep it on tmpfs (/var/run) like CDI_ROOT: a reboot must wipe it with the CDI specs and vhci attachments it describes.',
  ),
  KUBELET_REGISTRY_DIR: absolutePath('/var/lib/kubelet/plugins_registry').describe('The registration socket is <dir>/<driver>-reg.sock.'),
  RESCAN_INTERVAL: env.duration('2s').describe('Poll sysfs for USB changes this often (sysfs sends no inotify events).'),
  RESCAN_DEBOUNCE: env.duration('200ms').describe('Changes seen by inotify within this window coalesce into one scan.'),
  RESYNC_INTERVAL: env.duration('5m').describe('Re-apply the ResourceSlices this often, repairing slices deleted or edited by others.'),
  REMOVE_SLICES_ON_EXIT: env.bool(true).describe("Delete this node's ResourceSlices on SIGTERM/SIGINT."),
  HEALTH_PORT: env.port(4107).describe("Port of /health/liveness, /health/readiness and /metrics (the original's healthz port 4107); 0 picks a free one."),
  HEALTH_HOST: env.string('0.0.0.0').describe("Address the health and metrics server listens on (host network: the node's addresses)."),
  // /metrics behind Kubernetes authn/authz (shared/authz): METRICS_AUTH (kubernetes | none), METRICS_AUTH_RESOURCE_ATTRIBUTES.
  ...metricsAuthConfigShape,
  // The USB/IP gateway (usbip/README.md): USBIP_ENABLED (default false), USBIP_HOST, USBIP_PORT, ...
  ...usbipConfigShape,
  LOG_LEVEL: env.logLevel().describe('Log level.'),
});

export type DraConfig = Readonly<z.infer<typeof DraConfigSchema>>;

/** Parse the environment once into a frozen config; every problem is reported together. */
export function loadConfig(source: Readonly<Record<string, string | undefined>> = process.env): DraConfig {
  return parseConfig(DraConfigSchema, source);
}
