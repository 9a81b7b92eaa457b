/**
 * The cluster a command talks to, found as kubectl finds it: `--kubeconfig`, else $KUBECONFIG (a
 * list of files, merged), else ~/.kube/config; `--context`, else the current context; `-n`, else the
 * context's namespace, else `default`. Credentials are whatever the context holds (client
 * certificates, tokens, exec plugins), loaded and applied by shared/kube with client-node's KubeConfig.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { errorMessage } from '../errors/index.js';
import { KubeClient } from '../kube/index.js';
import { loadKubeConfig } from '../kube/kubeconfig.js';
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
    kubeConfig = loadKubeConfig({ kubeconfigPath: opts.kubeconfig, context: opts.context });
  } catch (err: unknown) {
    throw new UsageError(errorMessage(err), { cause: err });
  }
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new UsageError(`the kubeconfig's context "${kubeConfig.getCurrentContext()}" names no cluster`);
  const namespace = opts.namespace ?? kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace ?? 'default';
  const kube = new KubeClient(kubeConfig);
  return { kubeConfig, kube, namespace, server: cluster.server.replace(/\/+$/, ''), close: () => kube.close() };
}
