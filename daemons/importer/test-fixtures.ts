/**
 * Fixtures for the importer's tests and benchmark (not shipped behaviour): a context to run the
 * pipeline in-process and a failure reader. Disk images and their HTTP server: shared/testing/disk-images.ts.
 */
import { childLogger } from '../../shared/log/index.js';
import { loadConfig } from './config.js';
import { ImportError } from './errors.js';
import { Progress } from './progress.js';
import type { ImportContext } from './run.js';

/** An in-process run's context from importer env keys (LOG_LEVEL silent unless given). */
export function contextFor(env: Record<string, string>, signal: AbortSignal = new AbortController().signal): ImportContext {
  const config = loadConfig({ LOG_LEVEL: 'silent', IMPORTER_TERMINATION_LOG: '/dev/null', ...env });
  const log = childLogger({ component: 'importer-test' });
  log.level = config.LOG_LEVEL;
  return { config, signal, log, progress: new Progress(log, config.IMPORTER_PROGRESS_INTERVAL) };
}

/** The ImportError a run failed with; throws when it succeeded or failed with anything else. */
export async function importFailure(run: Promise<unknown>): Promise<ImportError> {
  const outcome = await run.then(
    (value: unknown) => ({ value }),
    (err: unknown) => ({ err }),
  );
  if ('err' in outcome && outcome.err instanceof ImportError) return outcome.err;
  throw new Error(`expected the run to fail with an ImportError, got ${'err' in outcome ? String(outcome.err) : `success ${JSON.stringify(outcome.value)}`}`);
}
