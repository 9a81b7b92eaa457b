/**
 * virtualization-dra, the composition root: config parsed once into a frozen object, one AbortSignal
 * fed by SIGTERM/SIGINT, one apiserver client, then the daemon (health server, sysfs monitor,
 * ResourceSlice publisher, kubelet plugin). Exit codes: 0 after a signal, 2 for invalid config, 1 for
 * anything else.
 */
import { runDaemonIfMain } from '../../shared/daemon/main.js';
import { loadConfig } from './config.js';
import { runDaemon } from './daemon.js';

runDaemonIfMain(import.meta.url, 'virtualization-dra', loadConfig, async ({ config, kube, signal }) => {
  await runDaemon({ config, kube, signal }).done;
  return 0;
});
