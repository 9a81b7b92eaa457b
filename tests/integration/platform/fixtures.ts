/**
 * `npm start` as a person runs it, from a test: the command in its own process (stdout a pipe, so the
 * plain log mode), its lines collected, its work directory known (--work-dir) for the pid file and
 * the logs, and a check that nothing it started outlives it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../../shared/testing/wait.js';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));

export interface StartRun {
  readonly child: ChildProcess;
  readonly lines: string[];
  /** Resolves with the exit code (or signal name) of `npm start`. */
  readonly exited: Promise<number | string>;
  /**
   * The first line matching `pattern`, once printed; fails at once if `npm start` ended without it.
   * With `stallMs`, a long run (the whole demo) is
   * judged by its progress: the wait fails early once no new line came for that long, and otherwise
   * lasts up to `timeoutMs` (a loaded machine slows every step, a stuck one prints nothing).
   */
  line(pattern: RegExp, timeoutMs?: number, opts?: { stallMs?: number }): Promise<string>;
  /** The last `n` lines, for a failure message. */
  tail(n?: number): string;
  /** What a terminal's Ctrl-C does: SIGINT to the whole foreground process group (npm, its shell, the platform). */
  interrupt(): void;
}

/** `npm start -- <args>` with the environment of a person's shell (no test-run variables); simulated guests unless `--guests` is given. */
export function npmStart(args: readonly string[], env: Record<string, string> = {}): StartRun {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'NODE_ENV' || k === 'KUBECONFIG' || k.startsWith('VIRT_TESTENV_STATE') || k.startsWith('JEST')) continue;
    clean[k] = v;
  }
  // A process group of its own, like a terminal's foreground job (npm does not pass SIGINT on: the
  // terminal sends it to the whole group).
  // Simulated guests unless the test asks for QEMU ones (npm start's default is real guests where QEMU is installed).
  const guests = args.some((a) => a.startsWith('--guests')) ? [] : ['--guests', 'simulated'];
  const child = spawn('npm', ['start', '--', ...args, ...guests], { cwd: REPO, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const lines: string[] = [];
  let partial = '';
  const take = (chunk: string): void => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  };
  child.stdout?.setEncoding('utf8').on('data', take);
  child.stderr?.setEncoding('utf8').on('data', take);
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  // 'close': exited and its output read to the end, so a line it printed last is in `lines`.
  let closed = false;
  child.once('close', () => (closed = true));
  return {
    child,
    lines,
    exited,
    line: (pattern, timeoutMs = 120_000, opts = {}) => {
      let count = lines.length;
      let grewAt = Date.now();
      const stalled = (): string | undefined => {
        if (closed && !lines.some((l) => pattern.test(l)))
          return `npm start ended (${String(child.exitCode ?? child.signalCode)}); the last line: ${lines.at(-1) ?? '(none)'}`;
        if (opts.stallMs === undefined) return undefined;
        if (lines.length !== count) [count, grewAt] = [lines.length, Date.now()];
        return Date.now() - grewAt > opts.stallMs ? `no new line for ${opts.stallMs} ms; the last: ${lines.at(-1) ?? '(none)'}` : undefined;
      };
      return waitFor(`npm start to print ${String(pattern)}`, () => lines.find((l) => pattern.test(l)), { timeoutMs, intervalMs: 100, abortIf: stalled });
    },
    tail: (n = 40) => lines.slice(-n).join('\n'),
    interrupt: () => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGINT');
      } catch {
        // already gone
      }
    },
  };
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Every process `npm start` recorded in its work directory (units, kwok, control plane). */
export function recordedChildren(workDir: string): { name: string; pid: number }[] {
  if (!existsSync(`${workDir}/platform.json`)) return [];
  const platform = JSON.parse(readFileSync(`${workDir}/platform.json`, 'utf8')) as { children: { name: string; pid: number }[] };
  return platform.children;
}

/**
 * Processes still running that were started by the run: recorded pids, any command line naming its
 * work directory, and anything in a recorded child's process group (what a unit started itself).
 * `children`: as recorded earlier (a later start in the same directory rewrites the record).
 */
export function survivors(workDir: string, children = recordedChildren(workDir)): string[] {
  const groups = new Set(children.map((c) => c.pid));
  const out = children.filter((c) => alive(c.pid)).map((c) => `${c.name} (pid ${c.pid})`);
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    if (Number(pid) === process.pid || groups.has(Number(pid))) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      // stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      // A zombie has exited already; its parent (or init) has yet to collect it.
      if (state !== 'Z' && (cmd.includes(workDir) || groups.has(Number(pgrp)))) out.push(`pid ${pid}: ${cmd.slice(0, 160)}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
