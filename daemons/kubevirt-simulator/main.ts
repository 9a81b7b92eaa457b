/**
 * kubevirt-simulator, the composition root: plays KubeVirt's part on the internal objects for a
 * machine without KubeVirt (the local platform of `npm start`). Never part of the install. Exit codes:
 * 0 after SIGTERM/SIGINT, 2 for invalid config, 1 for anything else.
 */
import { pathToFileURL } from 'node:url';
import { KubeClient } from '../../shared/kube/index.js';
import { rootLogger, setLogLevel } from '../../shared/log/index.js';
import { loadConfig, type SimulatorConfig } from './config.js';
import { KubeVirtSimulator } from './simulator.js';

export async function main(config: SimulatorConfig, signal: AbortSignal): Promise<void> {
  setLogLevel(config.LOG_LEVEL);
  const kube = KubeClient.fromSource(config.KUBECONFIG !== undefined ? { kubeconfigPath: config.KUBECONFIG } : { inCluster: true });
  const simulator = new KubeVirtSimulator(kube, {
    namespace: config.WATCH_NAMESPACE,
    launcherPods: config.LAUNCHER_PODS,
    autoRunOn: config.AUTO_RUN_NODE,
    bootDelayMs: config.GUEST_BOOT_DELAY,
    migrationDelayMs: config.MIGRATION_DELAY,
    unschedulableTimeoutMs: config.MIGRATION_UNSCHEDULABLE_TIMEOUT,
  });
  try {
    await simulator.start();
    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
  } finally {
    await simulator.stop();
    kube.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let config: SimulatorConfig | undefined;
  try {
    config = loadConfig();
  } catch (err: unknown) {
    rootLogger.fatal({ err }, 'invalid configuration');
    process.exit(2);
  }
  const shutdown = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => shutdown.abort());
  main(config, shutdown.signal).then(
    () => process.exit(0),
    (err: unknown) => {
      rootLogger.fatal({ err }, 'kubevirt simulator failed');
      process.exit(1);
    },
  );
}
