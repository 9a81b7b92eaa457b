/**
 * virtualization-controller, the composition root: config parsed once into a frozen object, one
 * AbortSignal fed by SIGTERM/SIGINT, one apiserver client, then the daemon (health server, leader
 * election, reconcilers while leading). Exit codes: 0 after a signal, 3 after losing leadership (the
 * Deployment restarts the pod as a fresh standby), 2 for invalid config, 1 for anything else.
 */
import { pathToFileURL } from 'node:url';
import { KubeClient } from '../../shared/kube/index.js';
import { rootLogger, setLogLevel } from '../../shared/log/index.js';
import { loadConfig, type ControllerConfig } from './config.js';
import { runDaemon } from './daemon.js';

export const EXIT_LOST_LEADERSHIP = 3;

export async function main(config: ControllerConfig): Promise<number> {
  setLogLevel(config.LOG_LEVEL);
  const shutdown = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => shutdown.abort(new Error(sig)));
  const kube = KubeClient.fromSource(config.KUBECONFIG !== undefined ? { kubeconfigPath: config.KUBECONFIG } : { inCluster: true });
  try {
    const { lostLeadership } = await runDaemon({ config, kube, signal: shutdown.signal }).done;
    return lostLeadership ? EXIT_LOST_LEADERSHIP : 0;
  } finally {
    kube.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let config: ControllerConfig | undefined;
  try {
    config = loadConfig();
  } catch (err: unknown) {
    rootLogger.fatal({ err }, 'invalid configuration');
    process.exit(2);
  }
  main(config).then(
    (code) => process.exit(code),
    (err: unknown) => {
      rootLogger.fatal({ err }, 'controller failed');
      process.exit(1);
    },
  );
}
