/**
 * A cluster of its own for the admission system test: a second kube-apiserver of the test
 * environment on the run's etcd under a separate key prefix (so the webhook configurations, the
 * default class and the `virtualization` ModuleConfig of this test meet no other test), the module's
 * CRDs plus a minimal ModuleConfig CRD (the benchmark uses it too), and the admission function serving
 * HTTPS in-process.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, type ServerHandle } from '../../../shared/runtime/index.js';
import { admission } from '../../../functions/admission/index.js';
import {
  createCA,
  getTestEnv,
  installDeckhouseCrds,
  issueCert,
  kubectl,
  startExtraApiServer,
  type ExtraApiServer,
  type KubectlOptions,
  type KubectlResult,
} from '../../env/index.js';

const KNATIVE = fileURLToPath(new URL('../../../knative/', import.meta.url));

export interface AdmissionCluster {
  readonly id: string;
  readonly apiserver: ExtraApiServer;
  readonly webhook: ServerHandle;
  /** The CA (PEM, base64) that signed the webhook's serving certificate. */
  readonly caBundle: string;
  /** kubectl against this cluster; the result as it is (code, stdout, stderr). */
  kubectl(args: string[], stdin?: string): Promise<KubectlResult>;
  /** kubectl that throws with stderr on failure. */
  ok(args: string[], stdin?: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startAdmissionCluster(): Promise<AdmissionCluster> {
  const id = randomBytes(4).toString('hex');
  const apiserver = await startExtraApiServer({ extraArgs: [`--etcd-prefix=/admission-${id}`] });
  const opts: KubectlOptions = { kubeconfigPath: apiserver.kubeconfigPath };
  const run = (args: string[], stdin?: string): Promise<KubectlResult> => kubectl(args, { ...opts, ...(stdin === undefined ? {} : { stdin }) });
  const ok = async (args: string[], stdin?: string): Promise<string> => {
    const res = await run(args, stdin);
    if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed:\n${res.stderr}`);
    return res.stdout;
  };
  let webhook: ServerHandle | undefined;
  let caBundle: string;
  try {
    await ok(['apply', '--server-side', '--field-manager=admission-test', '-k', join(KNATIVE, 'crds')]);
    await installDeckhouseCrds(apiserver.kubeconfigPath);
    await ok(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
    ({ webhook, caBundle } = await startWebhook(id, apiserver.kubeconfigPath));
    const stopAll = async (): Promise<void> => {
      await webhook?.close();
      await apiserver.stop();
    };
    return { id, apiserver, webhook, caBundle, kubectl: run, ok, stop: stopAll };
  } catch (err: unknown) {
    await webhook?.close();
    await apiserver.stop();
    throw err;
  }
}

/** The admission function with its real (kube-backed) lookups, over HTTPS with a fresh CA. */
async function startWebhook(id: string, kubeconfigPath: string): Promise<{ webhook: ServerHandle; caBundle: string }> {
  const dir = join(getTestEnv().workDir, `admission-${id}`);
  const ca = await createCA(dir, 'admission');
  const cert = await issueCert(ca, dir, 'serving', { commonName: '127.0.0.1', usage: 'server', ipAddresses: ['127.0.0.1'] });
  const webhook = await serve(admission, {
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      TLS_CERT_FILE: cert.certPath,
      TLS_KEY_FILE: cert.keyPath,
      KUBECONFIG: kubeconfigPath,
      // Every request sees what the test just wrote.
      LOOKUP_CACHE_TTL_MS: '0',
      LOOKUP_CACHE_STALE_MS: '0',
      CLUSTER_POD_SUBNET_CIDR: '10.111.0.0/16',
      CLUSTER_SERVICE_SUBNET_CIDR: '10.222.0.0/16',
    },
  });
  return { webhook, caBundle: (await readFile(ca.certPath)).toString('base64') };
}
