import { z } from 'zod';
import { env, parseConfig } from '../../../shared/config/index.js';

/** Environment of the simulator: every key documented, with a default. */
export const SimulatorConfigSchema = z.object({
  KUBECONFIG: env.optionalString().describe('Kubeconfig file; in-cluster service account when unset.'),
  ROLE: z
    .enum(['all', 'node-agent'])
    .default('all')
    .describe(
      "What to play: `all` (virt-controller and virt-handler, simulated) or `node-agent` (only virt-handler's part, on the instances, launcher pods and migrations a real virt-controller made; implies launcher pods).",
    ),
  WATCH_NAMESPACE: env.optionalString().describe('Simulate the VMs of this namespace only; every namespace when unset.'),
  NODE_LABELLER: env
    .bool(true)
    .describe(
      "Role `all`: label the nodes as KubeVirt's node labeller does (CPU models, features, host model, machine types), so Discovery classes and migrations work; the node agent always does.",
    ),
  LAUNCHER_PODS: env.bool(true).describe('Give each instance a virt-launcher pod placed by the scheduler (false: instances run at once, no pods).'),
  AUTO_RUN_NODE: env.optionalString().describe('Without launcher pods: the node every new instance runs on at once.'),
  GUEST_BOOT_DELAY: env.duration('1s', { allowZero: true }).describe('How long a guest boots once its launcher pod runs.'),
  MIGRATION_DELAY: env.duration('2s', { allowZero: true }).describe('How long a live migration copies memory once its target pod runs.'),
  MIGRATION_UNSCHEDULABLE_TIMEOUT: env.duration('30s').describe('A migration whose target pod cannot be placed fails after this long.'),
  VIRT_API_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .describe('Serve the virt-api stand-in (virt-api/) on this port (0 picks one, logged as `port`); unset: no stand-in.'),
  VIRT_API_HOST: env.string('127.0.0.1').describe('Address the virt-api stand-in binds.'),
  VIRT_API_TLS_CERT_FILE: env
    .optionalString()
    .describe("The stand-in's PEM serving certificate (with VIRT_API_TLS_KEY_FILE and VIRT_API_CLIENT_CA_FILE: mutual TLS; without: plain HTTP)."),
  VIRT_API_TLS_KEY_FILE: env.optionalString().describe('PEM key of VIRT_API_TLS_CERT_FILE.'),
  VIRT_API_CLIENT_CA_FILE: env.optionalString().describe('PEM CA that client certificates (the subresources API) must chain to.'),
  QEMU_GUESTS: z
    .enum(['off', 'auto', 'on'])
    .default('off')
    .describe(
      'Real guests: `off` (simulated guests), `auto` (a QEMU process per running instance where qemu-system-x86_64 is installed, simulated otherwise; npm start), `on` (QEMU required: the simulator does not start without it).',
    ),
  GUEST_WORK_DIR: env.optionalString().describe("Real guests: the directory of the guests' sockets and logs; a new one under the temp dir when unset."),
  GUEST_MEMORY_CAP_MIB: env
    .int(256, 16)
    .describe('Real guests: the most memory one guest gets on this machine, MiB (an instance asking more is capped, and says so).'),
  GUEST_HOST_RESERVE_MIB: env
    .int(1024, 0)
    .describe(
      "Real guests: memory kept for the rest of the machine, MiB: a guest (or a migration target) starts only while the machine's MemAvailable holds its memory, QEMU's own and this; otherwise the instance says InsufficientHostMemory.",
    ),
  GUEST_SHUTDOWN_GRACE: env
    .duration('30s')
    .describe('Real guests: how long a stopped guest has to power itself off after the ACPI power-down before it is killed.'),
  GUEST_MIGRATION_BANDWIDTH_MIB: env.int(0, 0).describe("Real guests: a live migration's bandwidth cap, MiB/s (KubeVirt's bandwidthPerMigration); 0: none."),
  GUEST_ACCEL: z
    .enum(['tcg', 'kvm', 'auto'])
    .default('tcg')
    .describe(
      'Real guests: `tcg` (software emulation), `kvm`, or `auto` (KVM where the firmware runs under it; a paravirtual KVM passes that probe and still fails the kernel).',
    ),
  EVICTION_WEBHOOK_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .describe(
      "Serve virt-api's eviction interceptor (virt-api/eviction-interceptor.ts) over HTTPS on this port with VIRT_API_TLS_CERT_FILE/KEY_FILE (0 picks one); unset: none.",
    ),
  EVICTION_STRATEGY: z
    .enum(['None', 'LiveMigrate', 'LiveMigrateIfPossible', 'External'])
    .default('LiveMigrate')
    .describe("The cluster's evictionStrategy the interceptor applies (our KubeVirt configuration says LiveMigrate)."),
  LOG_LEVEL: env.logLevel().describe('Log level.'),
});

export type SimulatorConfig = Readonly<z.infer<typeof SimulatorConfigSchema>>;

export function loadConfig(source: Readonly<Record<string, string | undefined>> = process.env): SimulatorConfig {
  return parseConfig(SimulatorConfigSchema, source);
}
