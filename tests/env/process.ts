import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';

/** A background process whose stdout and stderr go to a log file. */
export interface LoggedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Resolves with the exit code (or signal name) once the process ends. */
  readonly exited: Promise<number | string>;
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL at once; resolves when the process is gone. */
  kill(): Promise<void>;
}

/**
 * `env` replaces the inherited environment when given; `cwd` defaults to the current directory;
 * `detached` puts the child in a process group of its own, so that a terminal's Ctrl-C reaches only
 * the parent, which then stops its children in order. What such a child started in its group (e.g.
 * route-forge's `ip monitor`) is killed when the child exits, however it exits, so nothing outlives it.
 */
export function spawnLogged(
  name: string,
  bin: string,
  args: string[],
  logPath: string,
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; detached?: boolean } = {},
): LoggedProcess {
  const fd = openSync(logPath, 'a');
  let child: ChildProcess;
  try {
    child = spawn(bin, args, { stdio: ['ignore', fd, fd], ...opts, detached: opts.detached === true });
  } finally {
    closeSync(fd);
  }
  let done = false;
  const pid = child.pid ?? -1;
  const killGroup = (): void => {
    try {
      // The group outlives its leader while a member runs, so its id is not handed to another process.
      if (opts.detached === true && pid > 0) process.kill(-pid, 'SIGKILL');
    } catch {
      // no member left
    }
  };
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      killGroup();
      resolve(code ?? signal ?? 'unknown');
    });
    child.once('error', (err) => {
      done = true;
      resolve(`spawn error: ${err.message}`);
    });
  });
  const signal = (sig: NodeJS.Signals): void => {
    if (!done) child.kill(sig);
  };
  return {
    name,
    pid,
    logPath,
    exited,
    hasExited: () => done,
    async stop(graceMs = 5_000): Promise<void> {
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill(): Promise<void> {
      signal('SIGKILL');
      await exited;
    },
  };
}

/** The last `lines` lines of a log file, for error messages. */
export function tailLog(path: string, lines = 25): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Whether a log says that a listen address was taken (so the caller retries on other ports). */
export function logShowsPortInUse(path: string): boolean {
  return /address already in use/i.test(tailLog(path, 60));
}
