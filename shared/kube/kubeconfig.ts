/**
 * Credentials come from @kubernetes/client-node's `KubeConfig`: kubeconfig files (a `$KUBECONFIG` list
 * merged), the pod's service account, client certificates, tokens, token files re-read as they rotate,
 * and exec credential plugins (run again when their credential expires). Requests go through our own
 * transport (rest.ts, ADR 0002). What is ours here: where the kubeconfig comes from, and errors that
 * name the file, the field or the plugin that is wrong.
 */
import type https from 'node:https';
import type { User } from '@kubernetes/client-node';
// The module of KubeConfig, not the package's index: the index loads the whole generated API too
// (shared/bundle/index.ts: clientNodeKubeConfigOnly keeps it out of the bundles).
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { errorMessage } from '../errors/index.js';

/** A kubeconfig that cannot be used; the message names the file and the field, or the plugin. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

export interface KubeConfigLoad {
  /** A kubeconfig file; wins over everything else. */
  kubeconfigPath?: string | undefined;
  /** Use the pod's service account (KUBERNETES_SERVICE_HOST/PORT and the mounted token and CA). */
  inCluster?: boolean;
  /** A context other than the file's current one. */
  context?: string | undefined;
}

/**
 * A kubeconfig from, in order: an explicit path, the in-cluster service account, or the default search
 * (KUBECONFIG's files merged, ~/.kube/config, then in-cluster).
 * @param serviceAccountPrefix prefixed to the service-account mount's path (tests point it at a directory).
 */
export function loadKubeConfig(source: KubeConfigLoad = {}, serviceAccountPrefix = ''): KubeConfig {
  const kc = new KubeConfig();
  const origin = source.kubeconfigPath ?? (source.inCluster ? 'in-cluster' : process.env['KUBECONFIG'] || '~/.kube/config');
  try {
    if (source.kubeconfigPath) kc.loadFromFile(source.kubeconfigPath);
    else if (source.inCluster) {
      if (process.env['KUBERNETES_SERVICE_HOST'] === undefined || process.env['KUBERNETES_SERVICE_PORT'] === undefined)
        throw new Error('KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not running in a pod?)');
      kc.loadFromCluster(serviceAccountPrefix);
    } else kc.loadFromDefault();
  } catch (err: unknown) {
    throw new KubeConfigError(`cannot read the kubeconfig ${origin}: ${errorMessage(err).split('\n')[0]}`, { cause: err });
  }
  if (source.context) {
    if (kc.getContextObject(source.context) === null)
      throw new KubeConfigError(`${origin}: no context "${source.context}" (it has: ${kc.contexts.map((c) => c.name).join(', ') || 'none'})`);
    kc.setCurrentContext(source.context);
  }
  checkCurrentContext(kc, origin);
  return kc;
}

/**
 * What client-node leaves to the first request (or gets wrong silently), refused at load with the
 * field named: the current context and what it names, the server URL, base64 data, an exec plugin
 * without a command.
 */
function checkCurrentContext(kc: KubeConfig, origin: string): void {
  const fail = (message: string): never => {
    throw new KubeConfigError(`cannot read the kubeconfig ${origin}: ${message}`);
  };
  const name = kc.getCurrentContext();
  if (!name) fail('current-context is not set');
  const context = kc.getContextObject(name);
  if (context === null) fail(`current-context "${name}" is not among the contexts (${kc.contexts.map((c) => c.name).join(', ') || 'none'})`);
  const cluster = kc.getCurrentCluster();
  if (cluster === null) return fail(`context "${name}" names cluster "${context?.cluster}", which is not among the clusters`);
  if (!URL.canParse(cluster.server)) fail(`cluster "${cluster.name}" server is not a URL: ${cluster.server}`);
  const user = kc.getCurrentUser();
  if (context?.user && user === null) fail(`context "${name}" names user "${context.user}", which is not among the users`);
  const base64 = (what: string, value: string | undefined): void => {
    if (value && !/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(value)) fail(`${what} is not valid base64`);
  };
  base64(`cluster "${cluster.name}" certificate-authority-data`, cluster.caData);
  if (user === null) return;
  base64(`user "${user.name}" client-certificate-data`, user.certData);
  base64(`user "${user.name}" client-key-data`, user.keyData);
  if (user.exec && !execCommand(user)) fail(`user "${user.name}" exec: command is missing`);
}

function execCommand(user: User): string | undefined {
  const provider = user.authProvider as { config?: Record<string, unknown> } | undefined;
  const exec = (user.exec ?? provider?.config?.['exec']) as { command?: unknown } | undefined;
  return typeof exec?.command === 'string' && exec.command !== '' ? exec.command : undefined;
}

/**
 * The current context's TLS material and auth headers on `options` (client-node runs the exec plugin
 * or re-reads the token file when due). A failure names the user and, for an exec plugin, its command.
 */
export async function applyCredentials(kc: KubeConfig, options: https.RequestOptions): Promise<void> {
  try {
    await kc.applyToHTTPSOptions(options);
  } catch (err: unknown) {
    const user = kc.getCurrentUser();
    const command = user === null ? undefined : execCommand(user);
    const who = `user "${user?.name ?? '?'}"${command === undefined ? '' : ` (exec plugin ${command})`}`;
    throw new KubeConfigError(`the kubeconfig's credentials for ${who} failed: ${errorMessage(err).trim() || 'no message'}`, { cause: err });
  }
  // client-node keeps a token file's trailing newline, which is no valid header value.
  const headers = options.headers as Record<string, unknown> | undefined;
  if (typeof headers?.['Authorization'] === 'string') headers['Authorization'] = headers['Authorization'].trim();
}
