/**
 * The install on an apiserver of its own, as the certificate tests need it: an extra apiserver (its
 * own etcd prefix), Deckhouse's CRDs, `kubectl apply -k knative/`, the controller's certificate
 * manager running with the install's RBAC (impersonating the controller's ServiceAccount), and, on
 * demand, the admission function serving with the certificate it issued, its files kept in sync with
 * Secret `admission-tls` as kubelet keeps a mounted Secret, and the webhooks routed to it on loopback.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { admission } from '../../../functions/admission/index.js';
import { loadConfig } from '../../../daemons/controller/config.js';
import { runCertificates, type RunningCertificates } from '../../../daemons/controller/certificates/run.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { rootLogger } from '../../../shared/log/index.js';
import { serve, type ServerHandle } from '../../../shared/runtime/index.js';
import {
  getTestEnv,
  impersonatingKubeConfig,
  installDeckhouseCrds,
  newKubeConfig,
  startExtraApiServer,
  type ExtraApiServer,
  type KubectlOptions,
} from '../../env/index.js';
import { SecretFiles } from '../../../platform/secret-files.js';
import { routeWebhooksToLocal } from '../../../platform/webhook-wiring.js';
import { applyInstall, kubectlOk, prepareApiServer } from './knative-crds.js';

export const NS = 'd8-virtualization';
export const CONTROLLER_SA = `system:serviceaccount:${NS}:controller`;

export interface AdmissionServing {
  /** The function's certificate files, kept in sync with Secret admission-tls. */
  readonly files: SecretFiles;
  readonly webhook: ServerHandle;
  /** How many webhooks were routed to it. */
  readonly routed: number;
}

export interface Installed {
  readonly extra: ExtraApiServer;
  readonly opts: KubectlOptions;
  readonly admin: KubeClient;
  readonly certs: RunningCertificates;
  /** kubectl against the extra apiserver; rejects on a non-zero exit. */
  k(args: string[], stdin?: string): Promise<string>;
  /** A client of the extra apiserver acting as `user`. */
  impersonating(user: string): KubeClient;
  /** Stop the certificate manager (close() does too). */
  stopCertificates(): Promise<void>;
  /** Serve the admission function with the issued certificate (stopped by close()). */
  serveAdmission(): Promise<AdmissionServing>;
  close(): Promise<void>;
}

/** `name` marks the etcd prefix and the logger; `config` adds to the controller's environment (after POD_NAMESPACE and LOG_LEVEL). */
export async function installWithCertificates(name: string, config: Record<string, string> = {}): Promise<Installed> {
  const extra = await startExtraApiServer({ extraArgs: [`--etcd-prefix=/${name}-${randomBytes(4).toString('hex')}`] });
  const opts: KubectlOptions = { kubeconfigPath: extra.kubeconfigPath };
  const k = (args: string[], stdin?: string): Promise<string> => kubectlOk(args, { ...opts, ...(stdin === undefined ? {} : { stdin }) });
  await prepareApiServer(opts);
  await installDeckhouseCrds(extra.kubeconfigPath);
  await applyInstall(opts);
  const admin = new KubeClient(newKubeConfig(extra.kubeconfigPath));
  const impersonating = (user: string): KubeClient => new KubeClient(impersonatingKubeConfig(user, extra.kubeconfigPath));

  const stop = new AbortController();
  const controllerConfig = loadConfig({ POD_NAMESPACE: NS, LOG_LEVEL: 'silent', ...config });
  const log = rootLogger.child({ component: `${name}-test`, level: 'silent' });
  const certs = runCertificates(impersonating(CONTROLLER_SA), controllerConfig, stop.signal, log, 'test');
  await certs.firstPass;

  const serving: AdmissionServing[] = [];
  return {
    extra,
    opts,
    admin,
    certs,
    k,
    impersonating,
    stopCertificates: async () => {
      stop.abort();
      await certs.done;
    },
    serveAdmission: async () => {
      const files = new SecretFiles(join(getTestEnv().workDir, `admission-tls-${randomBytes(3).toString('hex')}`), {
        kube: admin,
        namespace: NS,
        name: 'admission-tls',
        intervalMs: 100,
      });
      await files.start();
      const webhook = await serve(admission, {
        env: {
          PORT: '0',
          HOST: '127.0.0.1',
          KUBECONFIG: extra.kubeconfigPath,
          LOG_LEVEL: 'silent',
          TLS_CERT_FILE: files.path('tls.crt'),
          TLS_KEY_FILE: files.path('tls.key'),
          TLS_RELOAD_INTERVAL_MS: '100',
          LOOKUP_CACHE_TTL_MS: '0',
          LOOKUP_CACHE_STALE_MS: '0',
        },
      });
      // The Service as an ExternalName on loopback; the webhooks keep their Service reference (shared with npm start).
      const routed = await routeWebhooksToLocal(admin, NS, 'admission-webhook', webhook.port);
      const s = { files, webhook, routed };
      serving.push(s);
      return s;
    },
    close: async () => {
      stop.abort();
      await certs.done;
      for (const s of serving) {
        s.files.stop();
        await s.webhook.close();
      }
      admin.close();
      await extra.stop();
    },
  };
}
