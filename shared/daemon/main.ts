/**
 * The entry of every daemon process, so that each `main.ts` stays its composition root: config parsed
 * once (a bad one, or a kubeconfig that cannot be read, logs a fatal line and exits 2), one AbortSignal fed by SIGTERM/SIGINT, one apiserver
 * client (KUBECONFIG, else in-cluster) closed at the end, and the exit code the daemon returns (1 when
 * it throws).
 */
import { KubeClient } from '../kube/index.js';
import { rootLogger, setLogLevel, type LogLevel } from '../log/index.js';
import { isMainModule } from './is-main.js';

export interface DaemonEntryConfig {
  readonly KUBECONFIG?: string | undefined;
  readonly LOG_LEVEL: LogLevel;
}

export interface DaemonRun<C> {
  readonly config: C;
  readonly kube: KubeClient;
  /** Aborted by SIGTERM or SIGINT. */
  readonly signal: AbortSignal;
}

/** Run `run` as the process when `moduleUrl` is the process's entry module; otherwise do nothing. */
export function runDaemonIfMain<C extends DaemonEntryConfig>(
  moduleUrl: string,
  name: string,
  loadConfig: () => C,
  run: (daemon: DaemonRun<C>) => Promise<number>,
): void {
  if (!isMainModule(moduleUrl)) return;
  let config: C;
  try {
    config = loadConfig();
  } catch (err: unknown) {
    rootLogger.fatal({ err }, 'invalid configuration');
    process.exit(2);
  }
  setLogLevel(config.LOG_LEVEL);
  const shutdown = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => shutdown.abort(new Error(sig)));
  let kube: KubeClient;
  try {
    kube = KubeClient.fromSource(config.KUBECONFIG !== undefined ? { kubeconfigPath: config.KUBECONFIG } : { inCluster: true });
  } catch (err: unknown) {
    // A missing or unreadable KUBECONFIG, or no pod service account: a configuration problem too.
    rootLogger.fatal({ err, kubeconfig: config.KUBECONFIG ?? 'in-cluster' }, 'cannot read the kubeconfig');
    process.exit(2);
  }
  run({ config, kube, signal: shutdown.signal })
    .finally(() => kube.close())
    .then(
      (code) => process.exit(code),
      (err: unknown) => {
        rootLogger.fatal({ err }, `${name} failed`);
        process.exit(1);
      },
    );
}
