/**
 * The importer/uploader program (ADR 0011): one run per pod, to completion. Reads its config once,
 * imports (or waits for an upload), writes the result JSON to the termination log and exits:
 * 0 succeeded, 1 failed (the reason is in the result), 2 invalid configuration. It needs no apiserver.
 */
import { errorMessage } from '../../shared/errors/index.js';
import { isMainModule } from '../../shared/daemon/is-main.js';
import { startHealthServer, type HealthServer } from '../../shared/daemon/health.js';
import { childLogger, rootLogger, setLogLevel } from '../../shared/log/index.js';
import { loadConfig, type ImporterConfig } from './config.js';
import { failureOf } from './errors.js';
import { Progress } from './progress.js';
import { EXIT, writeResult, type ImportResult } from './result.js';
import { runImport } from './run.js';
import { runUploader } from './upload.js';

/** Run once with a parsed config; returns the result (also written to the termination log). */
export async function runOnce(config: ImporterConfig, signal: AbortSignal): Promise<ImportResult> {
  const log = childLogger({ component: config.IMPORTER_SOURCE === 'upload' ? 'uploader' : 'importer' });
  const progress = new Progress(log, config.IMPORTER_PROGRESS_INTERVAL);
  let health: HealthServer | undefined;
  let result: ImportResult;
  try {
    // Inside the try: a metrics port it cannot bind is a Failed result like any other, not a crash.
    if (config.IMPORTER_METRICS_PORT !== undefined) {
      health = await startHealthServer(
        config.IMPORTER_METRICS_HOST,
        config.IMPORTER_METRICS_PORT,
        { ready: () => true, metrics: () => progress.expose() },
        'the metrics server',
      );
      log.info({ port: health.port }, 'metrics listening');
    }
    const ctx = { config, signal, log, progress };
    result = config.IMPORTER_SOURCE === 'upload' ? await runUploader(ctx) : await runImport(ctx);
    log.info({ result }, 'import succeeded');
  } catch (err: unknown) {
    const failure = signal.aborted ? { reason: 'Interrupted' as const, message: 'the import was interrupted' } : failureOf(err);
    result = { phase: 'Failed', ...failure };
    // Expected failures are the result, not a crash: the stack only for internal errors.
    log.error({ reason: failure.reason, ...(failure.reason === 'InternalError' ? { err } : {}) }, failure.message);
  } finally {
    await health?.close();
  }
  if (!writeResult(config.IMPORTER_TERMINATION_LOG, result)) log.warn({ path: config.IMPORTER_TERMINATION_LOG }, 'cannot write the termination log');
  return result;
}

async function main(): Promise<number> {
  let config: ImporterConfig;
  try {
    config = loadConfig();
  } catch (err: unknown) {
    rootLogger.fatal({ err }, 'invalid configuration');
    const message = errorMessage(err);
    writeResult(process.env['IMPORTER_TERMINATION_LOG'] ?? '/dev/termination-log', { phase: 'Failed', reason: 'InvalidConfiguration', message });
    return EXIT.invalidConfig;
  }
  setLogLevel(config.LOG_LEVEL);
  const shutdown = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => shutdown.abort(new Error(sig)));
  const result = await runOnce(config, shutdown.signal);
  return result.phase === 'Succeeded' ? EXIT.succeeded : EXIT.failed;
}

if (isMainModule(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      rootLogger.fatal({ err }, 'importer failed');
      process.exit(EXIT.failed);
    },
  );
}
