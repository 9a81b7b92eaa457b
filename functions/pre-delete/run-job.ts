import { parseConfig } from '../../shared/config/index.js';
import { ConfigError } from '../../shared/errors/index.js';
import { childLogger } from '../../shared/log/index.js';
import { confirmedCleanup, kubePorts } from './act.js';
import { preDeleteConfig } from './config.js';

/** Exit codes of the Job: a package manager stops the removal on anything but 0. */
export const EXIT = { done: 0, incomplete: 1, badConfig: 2, notConfirmed: 3 } as const;

/**
 * The one-shot clean-up (a package manager's pre-delete hook): 0 when every object is gone, 1 when the
 * deadline passed or a call failed, 2 when the configuration is invalid, 3 when the apiserver says
 * the ModuleConfig is there and enabled (nothing is deleted; a Warning Event on it). Unlike the original, a
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
  const ports = kubePorts(config.KUBECONFIG, log);
  try {
    const outcome = await confirmedCleanup(ports, config, { claim: 'being removed (the pre-delete Job started)', sender: 'the pre-delete Job', log, signal });
    if (outcome.kind === 'refused') return EXIT.notConfirmed;
    return outcome.report.ok ? EXIT.done : EXIT.incomplete;
  } finally {
    ports.close();
  }
}
