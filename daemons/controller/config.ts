import { hostname } from 'node:os';
import { z } from 'zod';
import { metricsAuthConfigShape } from '../../shared/authz/metrics.js';
import { env, parseConfig } from '../../shared/config/index.js';
import { cronProblem } from '../../shared/cron/index.js';
import { parseServingSecrets } from './certificates/run.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const servingSecrets = z
  .string()
  .default('admission-tls:admission-webhook,serving-certs:admission-webhook,subresources-tls:subresources-api')
  .transform(parseServingSecrets)
  .refine((list) => list.every((s) => DNS_LABEL.test(s.secret) && DNS_LABEL.test(s.service)), 'every entry must be `secret:service`, both DNS labels');

const clientSecrets = z
  .string()
  .default('virtualization-api-proxy-tls:virtualization-api-proxy')
  .transform((text) => parseServingSecrets(text).map(({ secret, service }) => ({ secret, commonName: service })))
  .refine((list) => list.every((s) => DNS_LABEL.test(s.secret) && s.commonName !== ''), 'every entry must be `secret:commonName`, the secret a DNS label');

const sharedSecrets = env.list('virtualization-dra-usbip', (s) => DNS_LABEL.test(s), 'every entry must be a Secret name (a DNS label)');

/** Environment of the controller: every key documented, with a default. */
export const ControllerConfigSchema = z.object({
  KUBECONFIG: env.optionalString().describe('Kubeconfig file; in-cluster service account when unset.'),
  POD_NAME: env.string(hostname()).describe('This replica; with a random suffix it is the leader-election identity.'),
  POD_NAMESPACE: env.string('d8-virtualization').describe('Namespace of the leader-election Lease.'),
  LEADER_ELECTION: env.bool(true).describe('Elect a leader through a Lease; only the leader reconciles.'),
  LEADER_ELECTION_LEASE_NAME: env.string('d8-virt-operator-leader-election-helper').describe('Name of the Lease.'),
  LEADER_ELECTION_LEASE_DURATION: env.duration('15s').describe('How long a silent leader keeps the lease.'),
  LEADER_ELECTION_RENEW_DEADLINE: env.duration('10s').describe('The leader steps down when it cannot renew for this long.'),
  LEADER_ELECTION_RETRY_PERIOD: env.duration('2s').describe('Pause between acquire or renew attempts.'),
  WATCH_NAMESPACE: env.optionalString().describe('Reconcile namespaced objects of this namespace only (tests, dev); all when unset.'),
  CLUSTER_OBJECTS_SELECTOR: env
    .optionalString()
    .describe('Label selector for the cluster-scoped objects reconciled and read (classes, cluster images, nodes, NodeUSBDevices); all when unset.'),
  HEALTH_PORT: env.port(8081).describe('Port of /health/liveness, /health/readiness and /metrics; 0 picks a free one.'),
  HEALTH_HOST: env.string('0.0.0.0').describe('Address the health and metrics server listens on.'),
  // /metrics behind Kubernetes authn/authz with this client (shared/authz): METRICS_AUTH (kubernetes | none), METRICS_AUTH_RESOURCE_ATTRIBUTES.
  ...metricsAuthConfigShape,
  VIRTUAL_MACHINE_CIDRS: env.cidrList().describe('Comma-separated subnets for VM IP addresses; the ModuleConfig wins when it sets them.'),
  CLUSTER_UUID: env
    .optionalString()
    .describe('The cluster UUID the OUI of generated VM MAC addresses is derived from; unset: the uid of Namespace kube-system.'),
  SDN_ENABLED: env
    .bool(false)
    .describe(
      "The SDN module is enabled (the original's SDN feature gate): NetworkReady of a VM with additional networks comes from its launcher pods' network.deckhouse.io/networks-status annotation; off: False, SDNModuleDisabled.",
    ),
  VIRTUAL_MACHINE_IP_LEASES_RETENTION_DURATION: env.duration('10m', { allowZero: true }).describe('How long a released IP lease is kept for its namespace.'),
  MODULE_CONFIG_WATCH: env.bool(true).describe('Read virtualMachineCIDRs from ModuleConfig `virtualization` when that resource exists.'),
  DEPENDENCY_RECHECK_INTERVAL: env.duration('10s').describe('A VM waiting for something not watched (a Secret) is looked at again after this long.'),
  KUBEVIRT_REFUSAL_BACKOFF: env
    .duration('2s')
    .describe('An internal VM refused by virt-api or the apiserver is tried again after this long, doubling per refusal of the same object.'),
  KUBEVIRT_REFUSAL_BACKOFF_MAX: env.duration('5m').describe('The longest wait between two attempts at an internal VM that keeps being refused.'),
  KUBEVIRT_CONFIG_NAMESPACE: env
    .string('d8-virtualization')
    .describe("Namespace of KubeVirt's configuration object `config` (InternalVirtualizationKubeVirt), which the install applies."),
  KUBEVIRT_CONFIG_REPAIR: env
    .bool(true)
    .describe(
      "Put back the parts of KubeVirt's configuration our internal objects need (the bpfbridge binding, machine types, feature gates) when they are removed.",
    ),
  RECONCILE_WORKERS: env.int(8, 1).describe('Concurrent reconciles of VirtualMachines; the other reconcilers use half of it.'),
  SHUTDOWN_DEADLINE: env.duration('10s').describe('Shutdown gives up waiting for in-flight work after this long.'),
  STORAGE_RECONCILERS: env
    .bool(true)
    .describe('Run the VirtualImage, ClusterVirtualImage, VirtualDisk and VirtualMachineBlockDeviceAttachment reconcilers (off: tests that play them).'),
  USB_RECONCILERS: env
    .bool(true)
    .describe('Run the USB reconcilers (ResourceSlice → NodeUSBDevice → USBDevice → ResourceClaimTemplate) when the apiserver serves resource.k8s.io/v1.'),
  DVCR_ADDRESS: env.string('dvcr.d8-virtualization.svc').describe('DVCR, the registry of images, as host[:port]; images go to <address>/vi|cvi|vd/...'),
  DVCR_PLAIN_HTTP: env.bool(false).describe('DVCR speaks plain HTTP instead of HTTPS (a loopback registry in tests and development).'),
  DVCR_GC_SCHEDULE: env
    .string('')
    .check((ctx) => {
      const problem = ctx.value.trim() === '' ? undefined : cronProblem(ctx.value);
      if (problem !== undefined) ctx.issues.push({ code: 'custom', message: `invalid cron schedule: ${problem}`, input: ctx.value });
    })
    .describe('Cron schedule (five fields, UTC) of DVCR garbage collection; empty: off. The ModuleConfig dvcr.gc.schedule wins when it sets dvcr.gc.'),
  DVCR_GC_COMMAND: env
    .string('')
    .describe(
      "The registry's blob garbage collection run after manifests are deleted (no shell), e.g. `registry garbage-collect <config> --delete-untagged`; empty: left to DVCR.",
    ),
  DVCR_GC_WAIT_TIMEOUT: env.duration('2h').describe('A garbage collection run that waits this long for imports to finish is cancelled (Error).'),
  IMPORTER_IMAGE: env.string('virtualization-importer').describe('Container image of the importer and uploader Pods (daemons/importer).'),
  IMPORT_PROGRESS_INTERVAL: env
    .duration('5s')
    .describe("While an importer runs, read its progress (the Pod's metrics) into the image's or disk's status.progress this often."),
  UPLOAD_WAIT_TIMEOUT: env.duration('10m').describe('An upload not started this long after its uploader began fails (WaitForUserUploadTimeout).'),
  CERT_ISSUER: z
    .enum(['self', 'external', 'off'])
    .default('self')
    .describe(
      'self: issue a CA and serving certificates and rotate them; external: the Secrets are filled by someone else (Deckhouse, cert-manager), only inject their ca.crt; off: do neither.',
    ),
  CERT_CA_SECRET: env.string('virtualization-ca').describe('Secret in POD_NAMESPACE holding the self-managed CA.'),
  CERT_SERVING_SECRETS: servingSecrets.describe('Serving certificates to issue, `secret:service` pairs, comma-separated.'),
  CERT_CLIENT_SECRETS: clientSecrets.describe(
    'Client certificates to issue from the same CA, `secret:commonName` pairs, comma-separated (the subresources API shows virt-api its own).',
  ),
  CERT_SHARED_SECRETS: sharedSecrets.describe(
    'Opaque Secrets kept filled with a random key (`secret`, 48 bytes), comma-separated: the DRA daemons prove it to each other before USB/IP.',
  ),
  CERT_CA_VALIDITY: env.duration('87600h').describe('Lifetime of a new CA (renewed after two thirds of it).'),
  CERT_SERVING_VALIDITY: env.duration('8760h').describe('Lifetime of a new serving certificate (renewed after two thirds of it).'),
  CERT_CA_OVERLAP: env
    .duration('2m')
    .describe('After a new CA, serving certificates of the previous one are replaced once the new CA has been in the trust bundles this long.'),
  CERT_RESYNC_INTERVAL: env.duration('1m').describe('Check the certificates at least this often, besides on every change of a watched object.'),
  LOG_LEVEL: env.logLevel().describe('Log level.'),
});

export type ControllerConfig = Readonly<z.infer<typeof ControllerConfigSchema>>;

/** Parse the environment once into a frozen config; every problem is reported together. */
export function loadConfig(source: Readonly<Record<string, string | undefined>> = process.env): ControllerConfig {
  return parseConfig(ControllerConfigSchema, source);
}
