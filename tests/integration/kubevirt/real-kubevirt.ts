/**
 * Upstream KubeVirt's virt-api and virt-controller (built by tests/env/build-kubevirt.sh) as local
 * processes against an apiserver of their own (same etcd, own prefix: no other test's internal VMs
 * reach them), through our api-rewriter, as the install runs them: they speak kubevirt.io, the
 * apiserver stores internal.virtualization.deckhouse.io. The apiserver calls virt-api's admission
 * webhooks through the rewriter's webhook proxy. KubeVirt's configuration is the install's
 * (knative/kubevirt/config/kubevirt-config.yaml), in namespace `kubevirt`: out of a cluster KubeVirt takes
 * its namespace from a service-account file it does not have, and falls back to that name.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { load as parseYaml } from 'js-yaml';
import { waitFor } from '../../../shared/testing/wait.js';
import { ensureKubeVirtBinaries } from '../../env/binaries.js';
import { createCA, freePort, getTestEnv, issueCert, kubectl, startExtraApiServer, type ExtraApiServer, type KubectlResult } from '../../env/index.js';
import { spawnLogged, type LoggedProcess } from '../../env/process.js';
import { spawnRewriter, type RewriterProcess } from '../api-rewriter/process.js';
import { installCrds } from '../install/knative-crds.js';
import { KNATIVE_DIR } from '../install/manifests.js';

/** Where KubeVirt runs out of a cluster (client-go util.GetNamespace's fallback). */
export const KUBEVIRT_NAMESPACE = 'kubevirt';
export const INTERNAL = 'internal.virtualization.deckhouse.io';
export const KUBEVIRT_CONFIG_FILE = join(KNATIVE_DIR, 'kubevirt', 'config', 'kubevirt-config.yaml');

export interface RealKubeVirt {
  readonly apiserver: ExtraApiServer;
  readonly rewriter: RewriterProcess;
  readonly virtApi: LoggedProcess;
  readonly virtController: LoggedProcess;
  /** kubectl against the apiserver directly (internal names). */
  kubectl(args: string[], stdin?: string): Promise<KubectlResult>;
  /** The same, failing with kubectl's stderr on a non-zero exit. */
  ok(args: string[], stdin?: string): Promise<string>;
  /** virt-controller's log so far. */
  controllerLog(): string;
  stop(): Promise<void>;
}

/** Edits KubeVirt's configuration by hand to drop the bpfbridge binding, and waits until virt-controller has read that version. */
export async function dropBpfBridgeBinding(kv: RealKubeVirt, timeoutMs: number): Promise<void> {
  const config = [`internalvirtualizationkubevirts.${INTERNAL}`, 'config', '-n', KUBEVIRT_NAMESPACE];
  await kv.ok(['patch', ...config, '--type=json', '-p', JSON.stringify([{ op: 'remove', path: '/spec/configuration/network/binding/bpfbridge' }])]);
  const rv = (JSON.parse(await kv.ok(['get', ...config, '-o', 'json'])) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  await waitFor('virt-controller to read the new configuration', () => kv.controllerLog().includes(`resource version '${rv}'`), { timeoutMs });
}

/** The install's KubeVirt configuration object, moved to KubeVirt's namespace here. */
export function kubeVirtConfig(): Record<string, unknown> & { metadata: { namespace: string }; spec: { configuration: Record<string, unknown> } } {
  const doc = parseYaml(readFileSync(KUBEVIRT_CONFIG_FILE, 'utf8')) as ReturnType<typeof kubeVirtConfig>;
  doc.metadata.namespace = KUBEVIRT_NAMESPACE;
  return doc;
}

/** A ValidatingWebhookConfiguration or MutatingWebhookConfiguration through the rewriter's webhook proxy. */
function webhookConfiguration(kind: 'Validating' | 'Mutating', port: number, caBundle: string, hooks: [string, string, string, string[]][]): string {
  return JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name: `virt-internal-virtualization-api-${kind === 'Validating' ? 'validator' : 'mutator'}` },
    webhooks: hooks.map(([name, path, resource, operations]) => ({
      name,
      clientConfig: { url: `https://127.0.0.1:${port}${path}`, caBundle },
      rules: [{ apiGroups: [INTERNAL], apiVersions: ['v1'], resources: [resource], operations }],
      failurePolicy: 'Fail',
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      timeoutSeconds: 30,
    })),
  });
}

/** Resolves once `url` answers TLS with any HTTP status. */
function answers(url: string, ca: string): Promise<boolean> {
  return new Promise((resolve) => {
    https
      .get(url, { ca }, (res) => {
        res.resume();
        resolve(true);
      })
      .on('error', () => resolve(false));
  });
}

export async function startRealKubeVirt(name: string): Promise<RealKubeVirt> {
  const binDir = await ensureKubeVirtBinaries();
  const env = getTestEnv();
  const dir = join(env.workDir, `${name}-${randomBytes(3).toString('hex')}`);
  const apiserver = await startExtraApiServer({ extraArgs: [`--etcd-prefix=/${name}-${randomBytes(4).toString('hex')}`] });
  const kc = (args: string[], stdin?: string): Promise<KubectlResult> =>
    kubectl(args, { kubeconfigPath: apiserver.kubeconfigPath, ...(stdin === undefined ? {} : { stdin }) });
  const ok = async (args: string[], stdin?: string): Promise<string> => {
    const res = await kc(args, stdin);
    if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${res.stderr}`);
    return res.stdout;
  };
  const started: { stop(): Promise<unknown> }[] = [apiserver];
  const stop = async (): Promise<void> => {
    for (const p of started.reverse()) await p.stop();
  };
  try {
    await installCrds(`${KNATIVE_DIR}crds`, { kubeconfigPath: apiserver.kubeconfigPath });

    // Certificates apart from the logs: KubeVirt's certificate managers watch their directory and
    // would reload (and log) on every log line written beside them.
    const certs = join(dir, 'certs');
    const ca = await createCA(certs, 'kubevirt');
    const caPem = readFileSync(ca.certPath, 'utf8');
    const serving = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], usage: 'server' as const };
    const apiCert = await issueCert(ca, certs, 'virt-api', { commonName: 'virt-api', ...serving });
    const proxyCert = await issueCert(ca, certs, 'webhook-proxy', { commonName: 'kube-api-rewriter', ...serving });
    const handlerClient = await issueCert(ca, certs, 'virt-handler-client', { commonName: 'virt-api', usage: 'client' });
    const controllerCert = await issueCert(ca, certs, 'virt-controller', { commonName: 'virt-controller', ...serving });
    const [apiPort, consolePort, controllerPort, webhookPort] = [await freePort(), await freePort(), await freePort(), await freePort()];

    const rewriter = await spawnRewriter({
      kubeconfigPath: apiserver.kubeconfigPath,
      name,
      env: {
        WEBHOOK_ADDRESS: `https://127.0.0.1:${apiPort}`,
        WEBHOOK_PROXY_HOST: '127.0.0.1',
        WEBHOOK_PROXY_PORT: String(webhookPort),
        WEBHOOK_CERT_FILE: proxyCert.certPath,
        WEBHOOK_KEY_FILE: proxyCert.keyPath,
      },
    });
    started.push(rewriter);

    // What virt-operator would have made: the namespace, KubeVirt's CA bundle, the configuration,
    // and its status: KubeVirt honours a configuration only once virt-operator set a phase, and takes
    // the default architecture from the status (without it virt-api refuses every VMI).
    await ok(['create', 'namespace', KUBEVIRT_NAMESPACE]);
    await ok(['create', 'configmap', 'kubevirt-ca', '-n', KUBEVIRT_NAMESPACE, `--from-file=ca-bundle=${ca.certPath}`]);
    await ok(['apply', '--server-side', '--field-manager=virt-operator', '-f', '-'], JSON.stringify(kubeVirtConfig()));
    await ok([
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

    const common = ['--kubeconfig', rewriter.kubeconfigPath, '--listen', '127.0.0.1'];
    const virtApi = spawnLogged(
      'virt-api',
      join(binDir, 'virt-api'),
      [
        ...common,
        '--port',
        String(apiPort),
        '--console-server-port',
        String(consolePort),
        '--tls-cert-file',
        apiCert.certPath,
        '--tls-key-file',
        apiCert.keyPath,
        '--handler-cert-file',
        handlerClient.certPath,
        '--handler-key-file',
        handlerClient.keyPath,
      ],
      join(dir, 'virt-api.log'),
    );
    started.push(virtApi);
    const virtController = spawnLogged(
      'virt-controller',
      join(binDir, 'virt-controller'),
      [...common, '--port', String(controllerPort), '--prom-cert-file', controllerCert.certPath, '--prom-key-file', controllerCert.keyPath],
      join(dir, 'virt-controller.log'),
    );
    started.push(virtController);
    const log = (p: LoggedProcess): string => readFileSync(p.logPath, 'utf8');
    const alive = (p: LoggedProcess): void => {
      if (p.hasExited()) throw new Error(`${p.name} exited; its log (${p.logPath}):\n${log(p).slice(-4000)}`);
    };

    await waitFor(
      'virt-api to serve TLS',
      async () => {
        alive(virtApi);
        return answers(`https://127.0.0.1:${apiPort}/apis/subresources.kubevirt.io/v1/healthz`, caPem);
      },
      { timeoutMs: 90_000 },
    );
    const caBundle = Buffer.from(caPem).toString('base64');
    await ok(
      ['apply', '--server-side', '--field-manager=virt-operator', '-f', '-'],
      webhookConfiguration('Mutating', webhookPort, caBundle, [
        ['virtualmachines-mutator.kubevirt.io', '/virtualmachines-mutate', 'internalvirtualizationvirtualmachines', ['CREATE', 'UPDATE']],
        ['virtualmachineinstances-mutator.kubevirt.io', '/virtualmachineinstances-mutate', 'internalvirtualizationvirtualmachineinstances', ['CREATE']],
      ]),
    );
    await ok(
      ['apply', '--server-side', '--field-manager=virt-operator', '-f', '-'],
      webhookConfiguration('Validating', webhookPort, caBundle, [
        ['virtualmachine-validator.kubevirt.io', '/virtualmachines-validate', 'internalvirtualizationvirtualmachines', ['CREATE', 'UPDATE']],
        [
          'virtualmachineinstances-create-validator.kubevirt.io',
          '/virtualmachineinstances-validate-create',
          'internalvirtualizationvirtualmachineinstances',
          ['CREATE'],
        ],
      ]),
    );
    await waitFor(
      'virt-controller to lead',
      () => {
        alive(virtController);
        return /became leader|successfully acquired lease/i.test(log(virtController));
      },
      { timeoutMs: 90_000 },
    );
    return { apiserver, rewriter, virtApi, virtController, kubectl: kc, ok, controllerLog: () => log(virtController), stop };
  } catch (err: unknown) {
    await stop();
    throw err;
  }
}
