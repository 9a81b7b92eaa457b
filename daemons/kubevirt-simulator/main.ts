/**
 * kubevirt-simulator, the composition root: plays KubeVirt's part on the internal objects for a
 * machine without KubeVirt (the local platform of `npm start`). Never part of the install. Exit codes:
 * 0 after SIGTERM/SIGINT, 2 for invalid config, 1 for anything else.
 */
import { runDaemonIfMain } from '../../shared/daemon/main.js';
import { loadConfig } from './config.js';
import { KubeVirtSimulator } from './simulator.js';

runDaemonIfMain(import.meta.url, 'kubevirt simulator', loadConfig, async ({ config, kube, signal }) => {
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
  }
  return 0;
});
