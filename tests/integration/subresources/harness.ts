/**
 * The subresources API wired the way the cluster wires it: the function on the function host over TLS
 * (serving certificate for subresources-api.d8-virtualization.svc), the install's APIService pointing
 * through an ExternalName Service at 127.0.0.1 (facts/testenv.md), and the virt-api stand-in behind
 * it over mutual TLS. The function reads the apiserver as its own ServiceAccount (the install's RBAC,
 * impersonated). APIServices are cluster-wide and the install's own tests apply the install to the
 * shared apiserver, so this runs on an apiserver of its own (same etcd, own key prefix).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { rootLogger } from '../../../shared/log/index.js';
import { serve, type ServerHandle } from '../../../shared/runtime/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import type { GuestSockets } from '../../../platform/simulators/kubevirt-simulator/virt-api/guest-stream.js';
import { VirtApiStandIn } from '../../../platform/simulators/kubevirt-simulator/virt-api/virt-api-stand-in.js';
import { subresources } from '../../../functions/subresources/index.js';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import {
  createCA,
  getTestEnv,
  impersonatingKubeConfig,
  issueCert,
  kubectl,
  startExtraApiServer,
  type ExtraApiServer,
  type KubectlOptions,
  type KubectlResult,
} from '../../env/index.js';
import type { CertAuthority } from '../../env/certs.js';
import { installCrds } from '../install/knative-crds.js';
import { KNATIVE_DIR } from '../install/manifests.js';
import { loadComponentRbac } from '../service-accounts/component-rbac.js';

export const API_SERVICE = 'v1alpha2.subresources.virtualization.deckhouse.io';
const APISERVICE_FILE = join(import.meta.dirname, '../../../knative/apiservice/subresources.yaml');
const NS = 'd8-virtualization';

export interface Pki {
  readonly dir: string;
  readonly ca: CertAuthority;
  readonly caPem: string;
  readonly serving: { certPath: string; keyPath: string };
  readonly virtApiServing: { cert: string; key: string };
  /** What the function shows virt-api. */
  readonly proxyClient: { certPath: string; keyPath: string };
  /** The apiserver's own front-proxy pair (what the aggregator presents). */
  readonly frontProxy: { cert: string; key: string; ca: string };
}

export async function makePki(name: string): Promise<Pki> {
  const env = getTestEnv();
  const dir = join(env.workDir, 'subresources', name);
  const ca = await createCA(dir, 'subresources');
  const serving = await issueCert(ca, dir, 'subresources-api', {
    commonName: 'subresources-api',
    usage: 'server',
    dnsNames: [`subresources-api.${NS}.svc`],
    ipAddresses: ['127.0.0.1'],
  });
  const virtApi = await issueCert(ca, dir, 'virt-api', { commonName: 'virt-api', usage: 'server', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const proxyClient = await issueCert(ca, dir, 'subresources-proxy', { commonName: 'virtualization-api-proxy', usage: 'client' });
  const pki = join(env.workDir, 'pki');
  return {
    dir,
    ca,
    caPem: await readFile(ca.certPath, 'utf8'),
    serving,
    virtApiServing: { cert: await readFile(virtApi.certPath, 'utf8'), key: await readFile(virtApi.keyPath, 'utf8') },
    proxyClient,
    frontProxy: {
      cert: await readFile(join(pki, 'front-proxy-client.crt'), 'utf8'),
      key: await readFile(join(pki, 'front-proxy-client.key'), 'utf8'),
      ca: await readFile(join(pki, 'front-proxy-ca.crt'), 'utf8'),
    },
  };
}

/** An apiserver of the test's own with the module's CRDs, namespace, role model and the component's RBAC. */
export interface Cluster {
  readonly apiserver: ExtraApiServer;
  readonly opts: KubectlOptions;
  kubectl(args: string[], opts?: Omit<KubectlOptions, 'kubeconfigPath'>): Promise<KubectlResult>;
  apply(yaml: string): Promise<void>;
}

export async function startCluster(): Promise<Cluster> {
  const apiserver = await startExtraApiServer({ extraArgs: [`--etcd-prefix=/subresources-${randomBytes(4).toString('hex')}`] });
  const opts = { kubeconfigPath: apiserver.kubeconfigPath };
  const k = (args: string[], more: Omit<KubectlOptions, 'kubeconfigPath'> = {}): Promise<KubectlResult> => kubectl(args, { ...more, ...opts });
  const ok = async (args: string[], stdin?: string): Promise<void> => {
    const res = await k(args, stdin === undefined ? {} : { stdin });
    if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${res.stderr}`);
  };
  await installCrds(`${KNATIVE_DIR}crds`, opts);
  for (const file of ['namespace.yaml', 'rbac/components/subresources.yaml', 'rbac/roles/user.yaml', 'rbac/roles/privileged-user.yaml']) {
    await ok(['apply', '--server-side', '--field-manager=virtualization-install', '-f', `${KNATIVE_DIR}${file}`]);
  }
  return {
    apiserver,
    opts,
    kubectl: k,
    apply: (yaml) => ok(['apply', '--server-side', '--force-conflicts', '--field-manager=subresources-test', '-f', '-'], yaml),
  };
}

/** The virt-api stand-in over mutual TLS; with `guests`, VMs running a real guest there get its console, screen and guest agent. */
export async function startVirtApi(pki: Pki, port = 0, guests?: GuestSockets): Promise<VirtApiStandIn> {
  const virtApi = new VirtApiStandIn({ port, tls: { ...pki.virtApiServing, clientCa: pki.caPem }, log: rootLogger, guests });
  await virtApi.start();
  return virtApi;
}

/** The function as its ServiceAccount, talking to `virtApiUrl`. */
export async function startSubresources(cluster: Cluster, pki: Pki, virtApiUrl: string, extraEnv: Record<string, string> = {}): Promise<ServerHandle> {
  const rbac = await loadComponentRbac('subresources');
  const kubeconfig = join(pki.dir, 'subresources-sa.kubeconfig');
  await writeFile(kubeconfig, impersonatingKubeConfig(rbac.user, cluster.opts.kubeconfigPath).exportConfig());
  return serve(subresources, {
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      METRICS_AUTH: 'none',
      TLS_CERT_FILE: pki.serving.certPath,
      TLS_KEY_FILE: pki.serving.keyPath,
      KUBECONFIG: kubeconfig,
      VIRT_API_URL: virtApiUrl,
      VIRT_API_CA_FILE: pki.ca.certPath,
      VIRT_API_CLIENT_CERT_FILE: pki.proxyClient.certPath,
      VIRT_API_CLIENT_KEY_FILE: pki.proxyClient.keyPath,
      VIRT_API_TIMEOUT_MS: '5000',
      ...extraEnv,
    },
  });
}

/**
 * The install's APIService (knative/apiservice/subresources.yaml) with the caBundle the certificate
 * manager would inject, and Service subresources-api as an ExternalName to 127.0.0.1 on `port`. Waits
 * until the aggregator reports it Available.
 */
export async function registerApiService(cluster: Cluster, pki: Pki, port: number): Promise<void> {
  const manifest = load(await readFile(APISERVICE_FILE, 'utf8')) as { spec: Record<string, unknown> & { service: Record<string, unknown> } };
  manifest.spec.service.port = port;
  manifest.spec['caBundle'] = Buffer.from(pki.caPem).toString('base64');
  await cluster.apply(
    `apiVersion: v1\nkind: Service\nmetadata: {name: subresources-api, namespace: ${NS}}\nspec: {type: ExternalName, externalName: 127.0.0.1, ports: [{name: https, port: ${port}}]}\n`,
  );
  await cluster.apply(JSON.stringify(manifest));
  await waitFor(
    `APIService ${API_SERVICE} Available`,
    async () => {
      const res = await cluster.kubectl(['get', 'apiservice', API_SERVICE, '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status}']);
      return res.stdout === 'True' ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}

export async function stopCluster(cluster: Cluster | undefined): Promise<void> {
  await cluster?.apiserver.stop();
}

/** The whole wiring at once: an apiserver of its own, the PKI, the virt-api stand-in, the function and its APIService. */
export interface Stack {
  readonly cluster: Cluster;
  readonly pki: Pki;
  virtApi: VirtApiStandIn;
  readonly fn: ServerHandle;
}

export async function startStack(name: string, extraEnv: Record<string, string> = {}, guests?: GuestSockets): Promise<Stack> {
  const cluster = await startCluster();
  const pki = await makePki(name);
  const virtApi = await startVirtApi(pki, 0, guests);
  const fn = await startSubresources(cluster, pki, virtApi.url, extraEnv);
  await registerApiService(cluster, pki, fn.port);
  return { cluster, pki, virtApi, fn };
}
