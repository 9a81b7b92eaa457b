/**
 * kube-api-rewriter, the composition root: config parsed once, one AbortSignal fed by SIGTERM/SIGINT,
 * one apiserver client (KUBECONFIG or in-cluster), then the proxy and its health server. Exit codes:
 * 0 after a signal, 2 for invalid config, 1 for anything else.
 */
import { runDaemonIfMain } from '../../shared/daemon/main.js';
import { loadConfig } from './config.js';
import { runApiRewriter } from './daemon.js';

runDaemonIfMain(import.meta.url, 'kube-api-rewriter', loadConfig, async ({ config, kube, signal }) => {
  await runApiRewriter({ config, kube, signal }).done;
  return 0;
});
