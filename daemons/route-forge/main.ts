/**
 * vm-route-forge, the composition root: config parsed once into a frozen object, one AbortSignal fed
 * by SIGTERM/SIGINT, one apiserver client, then the daemon (health server, informers, kernel
 * monitor, sync loop). Exit codes: 0 after a signal, 2 for invalid config, 1 for anything else.
 */
import { pathToFileURL } from 'node:url';
import { KubeClient } from '../../shared/kube/index.js';
import { rootLogger, setLogLevel } from '../../shared/log/index.js';
import { loadConfig, type RouteForgeConfig } from './config.js';
import { runDaemon } from './daemon.js';

export async function main(config: RouteForgeConfig): Promise<number> {
  setLogLevel(config.LOG_LEVEL);
  const shutdown = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => shutdown.abort(new Error(sig)));
  const kube = KubeClient.fromSource(config.KUBECONFIG !== undefined ? { kubeconfigPath: config.KUBECONFIG } : { inCluster: true });
  try {
    await runDaemon({ config, kube, signal: shutdown.signal }).done;
    return 0;
  } finally {
    kube.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let config: RouteForgeConfig | undefined;
  try {
    config = loadConfig();
  } catch (err: unknown) {
    rootLogger.fatal({ err }, 'invalid configuration');
    process.exit(2);
  }
  main(config).then(
    (code) => process.exit(code),
    (err: unknown) => {
      rootLogger.fatal({ err }, 'vm-route-forge failed');
      process.exit(1);
    },
  );
}
