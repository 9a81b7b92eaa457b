/**
 * virtualization-controller, the composition root: config parsed once into a frozen object, one
 * AbortSignal fed by SIGTERM/SIGINT, one apiserver client, then the daemon (health server, leader
 * election, reconcilers while leading). Exit codes: 0 after a signal, 3 after losing leadership (the
 * Deployment restarts the pod as a fresh standby), 2 for invalid config, 1 for anything else.
 */
import { runDaemonIfMain } from '../../shared/daemon/main.js';
import { loadConfig } from './config.js';
import { runDaemon } from './daemon.js';

export const EXIT_LOST_LEADERSHIP = 3;

runDaemonIfMain(import.meta.url, 'controller', loadConfig, async ({ config, kube, signal }) => {
  const { lostLeadership } = await runDaemon({ config, kube, signal }).done;
  return lostLeadership ? EXIT_LOST_LEADERSHIP : 0;
});
