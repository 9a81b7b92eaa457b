/**
 * The cluster a command talks to, found as kubectl finds it: `--kubeconfig`, else $KUBECONFIG (a
 * list of files, merged), else ~/.kube/config; `--context`, else the current context; `-n`, else the
 * context's namespace, else `default`. Credentials are whatever the context holds (client
 * certificates, tokens, exec plugins), applied by shared/kube.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { errorMessage } from '../errors/index.js';
import { KubeClient } from '../kube/index.js';
import { UsageError } from './exit-codes.js';

/** The options every command takes. */
export interface GlobalOptions {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  namespace?: string | undefined;
}

export interface Connection {
  readonly kubeConfig: KubeConfig;
  readonly kube: KubeClient;
  readonly namespace: string;
  /** The apiserver URL, without a trailing slash. */
  readonly server: string;
  close(): void;
}

export function connect(opts: GlobalOptions): Connection {
  let kubeConfig: KubeConfig;
  try {
    // @kubernetes/client-node, not shared/kube's small reader: a person's kubeconfig may need exec
    // plugins and a merged $KUBECONFIG list, which only the full library supports.
    kubeConfig = new KubeConfig();
    if (opts.kubeconfig) kubeConfig.loadFromFile(opts.kubeconfig);
    else kubeConfig.loadFromDefault();
  } catch (err: unknown) {
    const where = opts.kubeconfig ?? process.env['KUBECONFIG'] ?? '~/.kube/config';
    throw new UsageError(`cannot load the kubeconfig ${where}: ${errorMessage(err)}`, { cause: err });
  }
  if (opts.context !== undefined) {
    if (kubeConfig.getContextObject(opts.context) === null) {
      throw new UsageError(`the kubeconfig has no context "${opts.context}" (it has: ${kubeConfig.contexts.map((c) => c.name).join(', ') || 'none'})`);
    }
    kubeConfig.setCurrentContext(opts.context);
  }
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new UsageError(`the kubeconfig's context "${kubeConfig.getCurrentContext()}" names no cluster`);
  const namespace = opts.namespace ?? kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace ?? 'default';
  const kube = new KubeClient(kubeConfig);
  return { kubeConfig, kube, namespace, server: cluster.server.replace(/\/+$/, ''), close: () => kube.close() };
}
