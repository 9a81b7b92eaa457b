import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { IMAGE_ENV } from '../../bundle/image-env.js';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is shared/runtime/testing/process.ts). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** One line a function process wrote: its JSON log record, or `{ raw }` for anything else. */
export type LogRecord = Record<string, unknown>;

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface FunctionProcess {
  readonly child: ChildProcess;
  /** Every stdout and stderr line so far, in arrival order. */
  readonly logs: readonly LogRecord[];
  readonly exited: Promise<Exit>;
  /** Resolve with the first record (past or future) that matches; reject on exit or timeout. */
  waitForLog(match: (record: LogRecord) => boolean, timeoutMs?: number): Promise<LogRecord>;
  /** SIGKILL when still running; for test clean-up. */
  kill(): void;
}

export interface StartOptions {
  /** Added to the parent's environment; LOG_LEVEL defaults to info so that logs can be read. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * A shell command run before node starts, in the shell that then becomes node (exec): e.g. entering
   * a memory cgroup (tests/bench `memoryCage`). The child's pid stays node's.
   */
  readonly enter?: string;
}

/**
 * Run a function's entry module as its own process: `.ts` sources through tsx's loader in the same
 * node process (`node --import tsx`, so signals reach the function directly), `.js` with plain node.
 */
export function startFunctionProcess(entry: string, options: StartOptions = {}): FunctionProcess {
  return startNodeProcess(entry.endsWith('.ts') ? ['--import', 'tsx', entry] : [entry], options);
}

/** Run `node <args>` from the repository root, collecting its output lines as log records. */
export function startNodeProcess(args: readonly string[], options: StartOptions = {}): FunctionProcess {
  const [command, commandArgs] =
    options.enter === undefined ? [process.execPath, args] : ['bash', ['-c', `${options.enter}; exec "$0" "$@"`, process.execPath, ...args]];
  const child = spawn(command, commandArgs, {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...IMAGE_ENV, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogRecord[] = [];
  const waiters = new Set<() => void>();
  const exited = new Promise<Exit>((done) => child.once('exit', (code, signal) => done({ code, signal })));
  const record = (line: string, stream: string): void => {
    logs.push(parseLine(line, stream));
    for (const wake of waiters) wake();
  };
  createInterface({ input: child.stdout }).on('line', (line) => record(line, 'stdout'));
  createInterface({ input: child.stderr }).on('line', (line) => record(line, 'stderr'));
  return {
    child,
    logs,
    exited,
    waitForLog: (match, timeoutMs = 20_000) => waitForLog({ logs, waiters, exited }, match, timeoutMs),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Wait for the host's `listening` record and return the port it bound. */
export async function listeningPort(proc: FunctionProcess, timeoutMs?: number): Promise<number> {
  const record = await proc.waitForLog((r) => r['msg'] === 'listening', timeoutMs);
  return record['port'] as number;
}

function parseLine(line: string, stream: string): LogRecord {
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return { ...parsed, stream };
  } catch {
    // not JSON: kept as raw text below
  }
  return { raw: line, stream };
}

interface LogSource {
  readonly logs: readonly LogRecord[];
  readonly waiters: Set<() => void>;
  readonly exited: Promise<Exit>;
}

function waitForLog(source: LogSource, match: (r: LogRecord) => boolean, timeoutMs: number): Promise<LogRecord> {
  return new Promise((resolve, reject) => {
    const finish = (outcome: () => void): void => {
      clearTimeout(timer);
      source.waiters.delete(check);
      outcome();
    };
    const check = (): void => {
      const found = source.logs.find(match);
      if (found !== undefined) finish(() => resolve(found));
    };
    const timer = setTimeout(() => finish(() => reject(new Error(`no matching log line within ${timeoutMs} ms`))), timeoutMs);
    source.waiters.add(check);
    void source.exited.then((exit) => finish(() => reject(new Error(`process exited (${JSON.stringify(exit)}) first`))));
    check();
  });
}
