/**
 * Upstream KubeVirt's virt-api and virt-controller (built by tests/env/build-kubevirt.sh) as local
 * processes, through our api-rewriter, as the install runs them: they speak kubevirt.io, the
 * apiserver stores internal.virtualization.deckhouse.io. The apiserver calls virt-api's admission
 * webhooks through the rewriter's webhook proxy. One way to set them up, used by `npm start`
 * (start-kubevirt.ts) and the integration tests (tests/integration/kubevirt/real-kubevirt.ts):
 *
 * 1. `planKubeVirt`: certificates and ports; `rewriterWebhookEnv` is what the rewriter in front of
 *    KubeVirt needs for its webhook proxy (the caller starts that rewriter its own way);
 * 2. `applyKubeVirtConfiguration`: what virt-operator would have made (namespace, CA bundle, the
 *    install's configuration object with its status);
 * 3. `startKubeVirt`: the two processes, then once virt-api serves its aggregated API
 *    (`subresources.kubevirt.io`) and webhook configurations (admission webhooks, pod-eviction
 *    interceptor), and virt-controller's leadership.
 *
 * KubeVirt's namespace is `kubevirt`: out of a cluster KubeVirt takes its namespace from a
 * service-account file it does not have, and falls back to that name.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { join } from 'node:path';
import { load as parseYaml } from 'js-yaml';
import { waitFor } from '../shared/testing/wait.js';
import { createCA, issueCert, type LeafCert } from '../tests/env/certs.js';
import { freePort } from '../tests/env/ports.js';
import { spawnLogged, tailLog, type LoggedProcess } from '../tests/env/process.js';
import { KNATIVE_DIR, type Kubectl } from './install.js';

/** Where KubeVirt runs out of a cluster (client-go util.GetNamespace's fallback). */
export const KUBEVIRT_NAMESPACE = 'kubevirt';
export const INTERNAL = 'internal.virtualization.deckhouse.io';
export const KUBEVIRT_CONFIG_FILE = join(KNATIVE_DIR, 'kubevirt', 'config', 'kubevirt-config.yaml');
const FIELD_MANAGER = 'virt-operator';
const START_TIMEOUT_MS = 90_000;

type KubeVirtConfigObject = Record<string, unknown> & { metadata: { namespace: string }; spec: { configuration: Record<string, unknown> } };

/** The install's KubeVirt configuration object, moved to KubeVirt's namespace. */
export function kubeVirtConfig(): KubeVirtConfigObject {
  const doc = parseYaml(readFileSync(KUBEVIRT_CONFIG_FILE, 'utf8')) as KubeVirtConfigObject;
  doc.metadata.namespace = KUBEVIRT_NAMESPACE;
  return doc;
}

/**
 * The install's `customizeComponents.flags` for one component as command-line arguments, as
 * virt-operator renders them (`--<name> <value>`), without `kubeconfig`: here every component reaches
 * the apiserver through the rewriter this process was given. Unknown shapes fail naming the field.
 */
export function installFlags(component: 'api' | 'controller' | 'handler', doc: KubeVirtConfigObject = kubeVirtConfig()): string[] {
  const spec = doc.spec as { customizeComponents?: { flags?: Record<string, unknown> } };
  const flags = spec.customizeComponents?.flags?.[component] ?? {};
  if (typeof flags !== 'object' || flags === null) throw new Error(`spec.customizeComponents.flags.${component} of ${KUBEVIRT_CONFIG_FILE} is not a map`);
  return Object.entries(flags).flatMap(([name, value]) => {
    if (typeof value !== 'string') throw new Error(`spec.customizeComponents.flags.${component}.${name} of ${KUBEVIRT_CONFIG_FILE} is not a string`);
    if (name === 'kubeconfig') return [];
    return value === '' ? [`--${name.toLowerCase()}`] : [`--${name.toLowerCase()}`, value];
  });
}

/** Certificates (apart from the logs: KubeVirt's certificate managers watch their directory and reload on every change) and ports. */
export interface KubeVirtPlan {
  readonly caPath: string;
  readonly caPem: string;
  readonly virtApiCert: LeafCert;
  readonly webhookProxyCert: LeafCert;
  readonly handlerClientCert: LeafCert;
  readonly controllerCert: LeafCert;
  readonly ports: { readonly virtApi: number; readonly console: number; readonly webhookProxy: number };
}

export async function planKubeVirt(dir: string): Promise<KubeVirtPlan> {
  const certs = join(dir, 'certs');
  const ca = await createCA(certs, 'kubevirt');
  const serving = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], usage: 'server' as const };
  const [virtApiCert, webhookProxyCert, handlerClientCert, controllerCert] = await Promise.all([
    // Also the name the aggregator dials for KubeVirt's APIService (Service virt-api in KubeVirt's namespace).
    issueCert(ca, certs, 'virt-api', { commonName: 'virt-api', ...serving, dnsNames: ['localhost', `virt-api.${KUBEVIRT_NAMESPACE}.svc`] }),
    issueCert(ca, certs, 'webhook-proxy', { commonName: 'kube-api-rewriter', ...serving }),
    issueCert(ca, certs, 'virt-handler-client', { commonName: 'virt-api', usage: 'client' }),
    issueCert(ca, certs, 'virt-controller', { commonName: 'virt-controller', ...serving }),
  ]);
  const ports = { virtApi: await freePort(), console: await freePort(), webhookProxy: await freePort() };
  return { caPath: ca.certPath, caPem: readFileSync(ca.certPath, 'utf8'), virtApiCert, webhookProxyCert, handlerClientCert, controllerCert, ports };
}

/** Write a kubeconfig whose server is the api-rewriter's proxy at `proxyUrl` (no credentials: the proxy uses its own). */
export async function writeRewriterKubeconfig(path: string, proxyUrl: string): Promise<string> {
  await writeFile(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'rewriter', cluster: { server: proxyUrl } }],
      users: [{ name: 'none', user: {} }],
      contexts: [{ name: 'rewriter', context: { cluster: 'rewriter', user: 'none' } }],
      'current-context': 'rewriter',
    }),
  );
  return path;
}

/** The api-rewriter's webhook proxy settings: it serves on its own certificate and forwards to virt-api. */
export function rewriterWebhookEnv(plan: KubeVirtPlan): Record<string, string> {
  return {
    WEBHOOK_ADDRESS: `https://127.0.0.1:${plan.ports.virtApi}`,
    WEBHOOK_PROXY_HOST: '127.0.0.1',
    WEBHOOK_PROXY_PORT: String(plan.ports.webhookProxy),
    WEBHOOK_CERT_FILE: plan.webhookProxyCert.certPath,
    WEBHOOK_KEY_FILE: plan.webhookProxyCert.keyPath,
  };
}

/**
 * What virt-operator would have made: the namespace, KubeVirt's CA bundle, the configuration, and its
 * status: KubeVirt honours a configuration only once virt-operator set a phase, and takes the default
 * architecture from the status (without it virt-api refuses every VMI).
 */
export async function applyKubeVirtConfiguration(kubectl: Kubectl, plan: KubeVirtPlan): Promise<void> {
  const apply = (o: unknown): Promise<string> => kubectl(['apply', '--server-side', `--field-manager=${FIELD_MANAGER}`, '-f', '-'], JSON.stringify(o));
  await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: KUBEVIRT_NAMESPACE } });
  await apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kubevirt-ca', namespace: KUBEVIRT_NAMESPACE },
    data: { 'ca-bundle': plan.caPem },
  });
  await apply(kubeVirtConfig());
  await kubectl([
    'patch',
    `internalvirtualizationkubevirts.${INTERNAL}`,
    'config',
    '-n',
    KUBEVIRT_NAMESPACE,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status: { phase: 'Deployed', defaultArchitecture: 'amd64' } }),
  ]);
}

type Hook = [name: string, path: string, resource: string, operations: string[]];

/** A ValidatingWebhookConfiguration or MutatingWebhookConfiguration (upstream's names) through the rewriter's webhook proxy. */
function webhookConfiguration(kind: 'Validating' | 'Mutating', port: number, caBundle: string, hooks: Hook[], more: object[] = []): unknown {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name: `virt-internal-virtualization-api-${kind === 'Validating' ? 'validator' : 'mutator'}` },
    webhooks: [
      ...hooks.map(([name, path, resource, operations]) => ({
        name,
        clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle },
        rules: [{ apiGroups: [INTERNAL], apiVersions: ['v1'], resources: [resource], operations }],
        failurePolicy: 'Fail',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 30,
      })),
      ...more,
    ],
  };
}

export const EVICTION_INTERCEPTOR = 'virt-launcher-eviction-interceptor.kubevirt.io';
export const EVICTION_INTERCEPTOR_PATH = '/launcher-eviction-validate';

/**
 * virt-api's pod-eviction interceptor as virt-operator v1.6 registers it (in virt-api's validating
 * configuration): every operation on `pods/eviction` of a `virt-launcher*` pod, failurePolicy Fail,
 * side effects only without dry run. virt-api refuses the eviction of a migratable VM's launcher pod
 * with 429 and marks the instance `evacuationNodeName` (our controller's Evict operation migrates it).
 * The review names no KubeVirt object, so the rewriter's webhook proxy passes it unchanged; virt-api
 * reads the pod and patches the instance through the rewriter.
 */
function evictionInterceptor(port: number, caBundle: string): object {
  return {
    name: EVICTION_INTERCEPTOR,
    clientConfig: { url: `https://127.0.0.1:${port}${EVICTION_INTERCEPTOR_PATH}`, caBundle },
    rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'], operations: ['*'] }],
    matchConditions: [{ name: 'only-vms', expression: 'object.metadata.name.startsWith("virt-launcher")' }],
    failurePolicy: 'Fail',
    sideEffects: 'NoneOnDryRun',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 10,
  };
}

const MUTATING: Hook[] = [
  ['virtualmachines-mutator.kubevirt.io', '/virtualmachines-mutate', 'internalvirtualizationvirtualmachines', ['CREATE', 'UPDATE']],
  ['virtualmachineinstances-mutator.kubevirt.io', '/virtualmachineinstances-mutate', 'internalvirtualizationvirtualmachineinstances', ['CREATE']],
];
const VALIDATING: Hook[] = [
  ['virtualmachine-validator.kubevirt.io', '/virtualmachines-validate', 'internalvirtualizationvirtualmachines', ['CREATE', 'UPDATE']],
  [
    'virtualmachineinstances-create-validator.kubevirt.io',
    '/virtualmachineinstances-validate-create',
    'internalvirtualizationvirtualmachineinstances',
    ['CREATE'],
  ],
];

/**
 * KubeVirt's aggregated API as virt-operator registers it: APIService `v1.subresources.kubevirt.io`
 * (not renamed: no CRD group) to Service `virt-api`, here an ExternalName to 127.0.0.1 on virt-api's
 * port. virt-controller calls it through the rewriter and the apiserver: it applies a VM's volume
 * requests (virt-api's `addvolume`/`removevolume` with HotplugVolumes) with the instance's own
 * `addvolume`/`removevolume`, which the aggregator proxies to virt-api with its front-proxy certificate.
 */
function subresourcesApi(port: number, caBundle: string): unknown[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'virt-api', namespace: KUBEVIRT_NAMESPACE },
      spec: { type: 'ExternalName', externalName: '127.0.0.1', ports: [{ name: 'https', port }] },
    },
    {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1.subresources.kubevirt.io' },
      spec: {
        group: 'subresources.kubevirt.io',
        version: 'v1',
        groupPriorityMinimum: 1000,
        versionPriority: 15,
        caBundle,
        service: { name: 'virt-api', namespace: KUBEVIRT_NAMESPACE, port },
      },
    },
  ];
}

/** Resolves once `url` answers TLS with any HTTP status. */
function answers(url: string, ca: string): Promise<boolean> {
  return new Promise((resolve) => {
    https
      .get(url, { ca, timeout: 2_000 }, (res) => {
        res.resume();
        resolve(true);
      })
      .on('timeout', function (this: { destroy(): void }) {
        this.destroy();
      })
      .on('error', () => resolve(false));
  });
}

export interface KubeVirtOptions {
  /** Where virt-api and virt-controller are. */
  readonly binDir: string;
  /** kubectl against the apiserver (internal names). */
  readonly kubectl: Kubectl;
  /** A kubeconfig whose server is the api-rewriter's proxy. */
  readonly rewriterKubeconfig: string;
  /** Their logs: `virt-api.log`, `virt-controller.log`. */
  readonly logDir: string;
  /** Each process as it starts (the platform's supervisor registers it). */
  readonly started?: (p: LoggedProcess) => void;
  /** A process group of their own (the platform's children). */
  readonly detached?: boolean;
}

export interface KubeVirtProcesses {
  readonly virtApi: LoggedProcess;
  readonly virtController: LoggedProcess;
}

/** Whether virt-controller's log says it leads (it starts its controllers only then). */
export function leads(virtController: LoggedProcess): boolean {
  return /became leader|successfully acquired lease/i.test(readFileSync(virtController.logPath, 'utf8'));
}

/**
 * Start virt-api and virt-controller, register virt-api's webhooks (through the rewriter's webhook
 * proxy) once it serves, and resolve once virt-controller leads. On a failure the processes started
 * are left to the caller (`started` saw them).
 */
export async function startKubeVirt(plan: KubeVirtPlan, o: KubeVirtOptions): Promise<KubeVirtProcesses> {
  await mkdir(o.logDir, { recursive: true });
  // Only what they need of the environment: never the caller's KUBECONFIG.
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/' };
  const spawn = (name: string, args: string[]): LoggedProcess => {
    const p = spawnLogged(name, join(o.binDir, name), ['--kubeconfig', o.rewriterKubeconfig, '--listen', '127.0.0.1', ...args], join(o.logDir, `${name}.log`), {
      env,
      detached: o.detached === true,
    });
    o.started?.(p);
    return p;
  };
  const { ports } = plan;
  const virtApi = spawn('virt-api', [
    '--port',
    String(ports.virtApi),
    '--console-server-port',
    String(ports.console),
    '--tls-cert-file',
    plan.virtApiCert.certPath,
    '--tls-key-file',
    plan.virtApiCert.keyPath,
    '--handler-cert-file',
    plan.handlerClientCert.certPath,
    '--handler-key-file',
    plan.handlerClientCert.keyPath,
  ]);
  const virtController = spawn('virt-controller', [
    // Its metrics and health port, which nothing here reads: the kernel's choice. A port picked free
    // when the plan was made could be bound by another process before virt-controller bound it (a
    // full run lost virt-controller to 'bind: address already in use' that way).
    '--port',
    '0',
    '--prom-cert-file',
    plan.controllerCert.certPath,
    '--prom-key-file',
    plan.controllerCert.keyPath,
    // The install's flags (no evacuation workers: our Evict operation is the one migration).
    ...installFlags('controller'),
  ]);
  const exitedEarly = (p: LoggedProcess) => (): string | undefined =>
    p.hasExited() ? `${p.name} exited while starting; its log ${p.logPath} ends with:\n${tailLog(p.logPath, 20)}` : undefined;
  await waitFor('virt-api to serve TLS', () => answers(`https://127.0.0.1:${ports.virtApi}/apis/subresources.kubevirt.io/v1/healthz`, plan.caPem), {
    timeoutMs: START_TIMEOUT_MS,
    intervalMs: 200,
    abortIf: exitedEarly(virtApi),
  });
  const caBundle = Buffer.from(plan.caPem).toString('base64');
  const hooks = [
    ...subresourcesApi(ports.virtApi, caBundle),
    webhookConfiguration('Mutating', ports.webhookProxy, caBundle, MUTATING),
    webhookConfiguration('Validating', ports.webhookProxy, caBundle, VALIDATING, [evictionInterceptor(ports.webhookProxy, caBundle)]),
  ];
  await o.kubectl(['apply', '--server-side', `--field-manager=${FIELD_MANAGER}`, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: hooks }));
  await waitFor('virt-controller to lead', () => leads(virtController), { timeoutMs: START_TIMEOUT_MS, intervalMs: 200, abortIf: exitedEarly(virtController) });
  return { virtApi, virtController };
}
