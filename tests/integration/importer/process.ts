/**
 * The importer as a child process (`node --import tsx daemons/importer/main.ts`), as its pod runs it:
 * configured by env only, result read from its termination-message file, exit code kept.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

export interface ImporterRun {
  readonly code: number | null;
  /** The termination message, parsed (undefined if none was written). */
  readonly result: Record<string, unknown> | undefined;
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

export function startImporter(env: Record<string, string>): ImporterProcess {
  const dir = mkdtempSync(join(tmpdir(), 'importer-run-'));
  const termination = join(dir, 'termination-log');
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'daemons', 'importer', 'main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', LOG_LEVEL: 'info', IMPORTER_TERMINATION_LOG: termination, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ msg: line });
      }
    }
  });
  child.stderr.resume();
  const done = new Promise<ImporterRun>((resolveRun) => {
    child.once('exit', (code) => {
      let result: Record<string, unknown> | undefined;
      try {
        result = JSON.parse(readFileSync(termination, 'utf8')) as Record<string, unknown>;
      } catch {
        result = undefined;
      }
      rmSync(dir, { recursive: true, force: true });
      resolveRun({ code, result, logs });
    });
  });
  return { pid: child.pid ?? 0, done, logs, signal: (sig) => child.kill(sig) };
}

/** Run the importer to completion. */
export function runImporter(env: Record<string, string>): Promise<ImporterRun> {
  return startImporter(env).done;
}
