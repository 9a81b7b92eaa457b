import type { z } from 'zod';
import { isMainModule } from '../daemon/is-main.js';
import { ConfigError, errorMessage } from '../errors/index.js';
import { childLogger, type Logger } from '../log/index.js';
import { serve } from './server.js';
import type { FunctionDefinition } from './types.js';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/** Serves the definition `runIfMain` chose, once the modules loaded with the entry have all run. */
let startChosen: (() => void) | undefined;

/**
 * Serve `def` when the module at `moduleUrl` is the process entry point (`node dist/functions/x/index.js`,
 * `node --import tsx functions/x/index.ts`, or a bundle: shared/bundle); do nothing when it is imported
 * (tests, other modules). In a bundle every module has the bundle's URL, so each `runIfMain` of the
 * modules inside it matches: the last call wins, which is the entry's own, because a module runs after
 * the modules it imports. The start waits for the current module evaluation to finish (one macrotask).
 */
export function runIfMain<C extends z.ZodObject, S>(moduleUrl: string, def: FunctionDefinition<C, S>): void {
  if (!isMainModule(moduleUrl)) return;
  if (startChosen === undefined) setImmediate(() => startChosen?.());
  startChosen = () => runMain(def);
}

/**
 * Serve until SIGTERM or SIGINT, then drain and exit: 0 when everything finished in time, 1 otherwise.
 * A start failure exits 1 after one log line (for bad config: every bad key in that one message).
 */
export function runMain<C extends z.ZodObject, S>(def: FunctionDefinition<C, S>): void {
  const log = childLogger({ component: def.name });
  serve(def).then(
    (handle) => {
      let stopping = false;
      const stop = (signal: NodeJS.Signals): void => {
        if (stopping) exitNow(log, 1, { signal }, 'second signal while draining; exiting now');
        stopping = true;
        log.info({ signal }, 'stopping');
        handle.close().then(
          (report) => exitNow(log, report.clean ? 0 : 1, { ...report }, 'exiting'),
          (err: unknown) => exitNow(log, 1, { err }, 'shutdown failed'),
        );
      };
      for (const signal of SIGNALS) process.on(signal, stop);
    },
    (err: unknown) => reportStartFailure(log, err),
  );
}

function reportStartFailure(log: Logger, err: unknown): void {
  if (err instanceof ConfigError) {
    exitNow(log, 1, { code: err.code, problems: err.problems }, err.message);
  }
  exitNow(log, 1, { err }, `failed to start: ${errorMessage(err)}`);
}

function exitNow(log: Logger, code: number, fields: object, message: string): never {
  if (code === 0) log.info(fields, message);
  else log.fatal(fields, message);
  process.exit(code);
}
