import { parseConfig } from '../../shared/config/index.js';
import { ConfigError } from '../../shared/errors/index.js';
import { KubeClient } from '../../shared/kube/index.js';
import { childLogger } from '../../shared/log/index.js';
import { deleteAndWait } from './cleanup.js';
import { preDeleteConfig } from './config.js';
import { KubeTargetStore } from './kube-store.js';
import { logReport } from './report.js';

/** Exit codes of the Job: a package manager stops the removal on anything but 0. */
export const EXIT = { done: 0, incomplete: 1, badConfig: 2 } as const;

/**
 * The one-shot clean-up (a package manager's pre-delete hook): 0 when every object is gone, 1 when the
 * deadline passed or a call failed, 2 when the configuration is invalid. Unlike the original, a
 * failure is never reported as success. `signal` (SIGTERM in job.ts) ends the wait early, as a failure.
 */
export async function runJob(env: Readonly<Record<string, string | undefined>>, signal?: AbortSignal): Promise<number> {
  const log = childLogger({ component: 'pre-delete', mode: 'job' });
  let config;
  try {
    config = parseConfig(preDeleteConfig, env);
  } catch (err: unknown) {
    if (!(err instanceof ConfigError)) throw err;
    log.fatal({ code: err.code, problems: err.problems }, err.message);
    return EXIT.badConfig;
  }
  const store = new KubeTargetStore(KubeClient.fromSource({ kubeconfigPath: config.KUBECONFIG }));
  try {
    const report = await deleteAndWait(config.RESOURCES, store, { timeoutMs: config.WAIT_TIMEOUT, pollMs: config.POLL_INTERVAL, signal });
    logReport(log, report);
    return report.ok ? EXIT.done : EXIT.incomplete;
  } finally {
    store.close();
  }
}
