/**
 * The platform's child processes: every one is registered here as it starts; the first that ends
 * while the platform is not stopping is reported as a crash (its name, exit code and log file), and
 * `stopAll` stops the rest in the reverse order of their start, each with SIGTERM then SIGKILL.
 */
import { writeFileSync } from 'node:fs';
import type { LoggedProcess } from '../tests/env/process.js';

export interface Crash {
  readonly name: string;
  readonly exit: number | string;
  readonly logPath: string;
}

export class Supervisor {
  private readonly procs: LoggedProcess[] = [];
  /** name → the process it must outlive (stopped right after that one). */
  private readonly outlives = new Map<string, string>();
  /** name → how long it may take to stop after SIGTERM. */
  private readonly grace = new Map<string, number>();
  private stopping = false;
  private reportCrash: (c: Crash) => void = () => undefined;
  /** Resolves with the first unexpected exit. */
  readonly crashed: Promise<Crash>;

  constructor(private readonly pidFile?: string) {
    this.crashed = new Promise((resolve) => (this.reportCrash = resolve));
  }

  /**
   * Watch `proc`. With `outlives`, it is stopped right after the process of that name rather than in
   * reverse start order (the audit function outlives kube-apiserver, whose last audit events it takes).
   * With `graceMs`, SIGKILL follows SIGTERM after that long instead of stopAll's default.
   */
  add(proc: LoggedProcess, opts: { outlives?: string; graceMs?: number } = {}): LoggedProcess {
    this.procs.push(proc);
    if (opts.outlives !== undefined) this.outlives.set(proc.name, opts.outlives);
    if (opts.graceMs !== undefined) this.grace.set(proc.name, opts.graceMs);
    this.writePids();
    void proc.exited.then((exit) => {
      if (!this.stopping) this.reportCrash({ name: proc.name, exit, logPath: proc.logPath });
    });
    return proc;
  }

  /** Whether any process was ever started (so that logs exist). */
  startedAny(): boolean {
    return this.procs.length > 0;
  }

  /** Every registered process still running, by name. */
  running(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const p of this.procs) if (!p.hasExited()) out[p.name] = p.pid;
    return out;
  }

  /** Stop every process, last started first; a process that ignores SIGTERM for `graceMs` is killed. */
  async stopAll(graceMs = 10_000, onStep: (name: string) => void = () => undefined): Promise<void> {
    this.stopping = true;
    for (const p of this.stopOrder()) {
      if (p.hasExited()) continue;
      onStep(p.name);
      await p.stop(this.grace.get(p.name) ?? graceMs);
    }
    this.writePids();
  }

  /** SIGKILL every process still running, at once (a second Ctrl-C). */
  killAll(): void {
    this.stopping = true;
    for (const p of this.procs) if (!p.hasExited()) void p.kill();
  }

  private stopOrder(): LoggedProcess[] {
    const order = [...this.procs].reverse().filter((p) => !this.outlives.has(p.name));
    for (const p of [...this.procs].reverse().filter((q) => this.outlives.has(q.name))) {
      const at = order.findIndex((q) => q.name === this.outlives.get(p.name));
      order.splice(at < 0 ? 0 : at + 1, 0, p);
    }
    return order;
  }

  /** pids of every child, for `npm start` runs that find a predecessor's leftovers (and for tests). */
  private writePids(): void {
    if (this.pidFile === undefined) return;
    const all = this.procs.map((p) => ({ name: p.name, pid: p.pid, logPath: p.logPath }));
    writeFileSync(this.pidFile, JSON.stringify({ platformPid: process.pid, children: all }, null, 2));
  }
}
