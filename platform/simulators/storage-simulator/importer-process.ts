/**
 * The importer program (daemons/importer) as a child process, as its pod's container runs it:
 * configured by env only, result read from its termination-message file, exit code kept. The storage
 * simulator runs every importer/uploader pod this way; the importer's integration tests run it too.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
/** The program's sources, run with tsx; a bundled `.js` of it runs with plain node. */
export const IMPORTER_SOURCE_ENTRY = join(ROOT, 'daemons', 'importer', 'main.ts');

export interface ImporterRun {
  readonly code: number | null;
  /** The termination message, parsed (undefined if none was written or it is not JSON). */
  readonly result: Record<string, unknown> | undefined;
  /** The termination message as written (what a kubelet copies into the container status). */
  readonly message: string;
  /** JSON log lines of the run. */
  readonly logs: Array<Record<string, unknown>>;
}

export interface ImporterProcess {
  readonly pid: number;
  /** Resolves when the process exits. */
  readonly done: Promise<ImporterRun>;
  /** Log lines so far. */
  readonly logs: Array<Record<string, unknown>>;
  signal(sig: NodeJS.Signals): void;
}

export interface ImporterLaunch {
  /** The program: `daemons/importer/main.ts` (default, run with tsx) or a bundle of it (`.js`). */
  readonly program?: string;
  /** Every log line as it comes (the simulator forwards them to its own log). */
  readonly onLog?: (line: Record<string, unknown>) => void;
}

export function startImporter(env: Record<string, string>, launch: ImporterLaunch = {}): ImporterProcess {
  const dir = mkdtempSync(join(tmpdir(), 'importer-run-'));
  const termination = join(dir, 'termination-log');
  const program = launch.program ?? IMPORTER_SOURCE_ENTRY;
  const args = program.endsWith('.ts') ? ['--import', 'tsx', program] : ['--enable-source-maps', program];
  // The working directory is ours (the repository's root for tsx to resolve).
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', LOG_LEVEL: 'info', ...env, IMPORTER_TERMINATION_LOG: termination },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const push = (line: string): void => {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      parsed = { msg: line };
    }
    logs.push(parsed);
    launch.onLog?.(parsed);
  };
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line !== '') push(line);
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2048)));
  const done = new Promise<ImporterRun>((resolveRun) => {
    child.once('close', (code) => {
      if (partial !== '') push(partial);
      let message: string;
      try {
        message = readFileSync(termination, 'utf8');
      } catch {
        // Nothing written: a kubelet falls back to the end of the log (FallbackToLogsOnError).
        message = stderr;
      }
      let result: Record<string, unknown> | undefined;
      try {
        result = JSON.parse(message) as Record<string, unknown>;
      } catch {
        result = undefined;
      }
      rmSync(dir, { recursive: true, force: true });
      resolveRun({ code, result, message, logs });
    });
  });
  return { pid: child.pid ?? 0, done, logs, signal: (sig) => child.kill(sig) };
}

/** Run the importer to completion. */
export function runImporter(env: Record<string, string>, launch: ImporterLaunch = {}): Promise<ImporterRun> {
  return startImporter(env, launch).done;
}
