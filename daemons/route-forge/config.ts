import { z } from 'zod';
import { metricsAuthConfigShape } from '../../shared/authz/metrics.js';
import { env, parseConfig } from '../../shared/config/index.js';

/** Tables 0 (unspec) and 253-255 (default, main, local) belong to the kernel. */
const RESERVED_TABLES = new Set([0, 253, 254, 255]);
const tableId = z.coerce
  .number()
  .int()
  .min(1)
  .max(2 ** 31 - 1)
  .default(1490)
  .refine((t) => !RESERVED_TABLES.has(t), "tables 253 (default), 254 (main) and 255 (local) are the kernel's");

/** Linux interface names: 1 to 15 characters, no slash, colon or white space. */
const deviceName = z
  .string()
  .default('cilium_host')
  .refine((d) => /^[A-Za-z0-9_.@-]{1,15}$/.test(d), 'must be a network interface name (at most 15 characters)');
const netnsName = z
  .string()
  .optional()
  .refine((n) => n === undefined || /^[A-Za-z0-9_.-]{1,64}$/.test(n), 'must be the name of a network namespace under /run/netns');

/** Environment of vm-route-forge: every key documented, with a default. */
export const RouteForgeConfigSchema = z.object({
  KUBECONFIG: env.optionalString().describe('Kubeconfig file; in-cluster service account when unset.'),
  VIRTUAL_MACHINE_CIDRS: env
    .cidrList()
    .describe("Comma-separated VM subnets (the original's --cidr); the ModuleConfig `virtualization` wins when it sets them."),
  MODULE_CONFIG_WATCH: env.bool(true).describe('Read virtualMachineCIDRs from ModuleConfig `virtualization` when that resource exists.'),
  ROUTE_TABLE_ID: tableId.describe("The dedicated routing table; its rules get the same number as priority (the original's --tableId)."),
  LOCAL_DEVICE: deviceName.describe('Device of the routes to VMs on this node (the original: cilium_host).'),
  WATCH_NAMESPACE: env.optionalString().describe('Route the VMs of this namespace only (tests, development); every namespace when unset.'),
  DRY_RUN: env.bool(false).describe('Read the cluster and the kernel, compute and log the changes, write nothing.'),
  RESYNC_INTERVAL: env.duration('60s').describe('Full sync at least this often, besides on every change seen in the cluster or the kernel.'),
  IP_COMMAND: env.string('ip').describe('The iproute2 `ip` binary.'),
  NETNS: netnsName.describe('Program this named network namespace (`ip -n`) instead of the own one: tests, benchmarks, local runs.'),
  HEALTH_PORT: env.port(4105).describe('Port of /health/liveness, /health/readiness and /metrics (the original: 4105); 0 picks a free one.'),
  HEALTH_HOST: env.string('0.0.0.0').describe("Address the health and metrics server listens on (host network: the node's addresses)."),
  // /metrics behind Kubernetes authn/authz (shared/authz): METRICS_AUTH (kubernetes | none), METRICS_AUTH_RESOURCE_ATTRIBUTES.
  ...metricsAuthConfigShape,
  LOG_LEVEL: env.logLevel().describe('Log level.'),
});

export type RouteForgeConfig = Readonly<z.infer<typeof RouteForgeConfigSchema>>;

/** Parse the environment once into a frozen config; every problem is reported together. */
export function loadConfig(source: Readonly<Record<string, string | undefined>> = process.env): RouteForgeConfig {
  return parseConfig(RouteForgeConfigSchema, source);
}
