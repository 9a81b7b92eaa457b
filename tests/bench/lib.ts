/**
 * Shared helpers for benchmarks: timing, percentiles, knobs, and tables that show every figure as a
 * ratio to a baseline measured in the same run (so results compare across machines).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { parseConfig } from '../../shared/config/index.js';

/** The row every function benchmark compares against: the sample function's empty `GET /empty` route. */
export const EMPTY_FUNCTION_BASELINE = 'empty function (GET /empty)';

export interface Summary {
  readonly n: number;
  readonly min: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** Milliseconds from an arbitrary origin, sub-millisecond resolution. */
export function nowMs(): number {
  return performance.now();
}

/** Run `work` and return how long it took with its value. */
export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = nowMs();
  const value = await work();
  return { ms: nowMs() - start, value };
}

/** Nearest-rank percentile (p in 0..100) of values sorted ascending. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] ?? Number.NaN;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((acc, v) => acc + v, 0);
  return {
    n: sorted.length,
    min: sorted[0] ?? Number.NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
  };
}

/** The item whose key is the (upper) median: a representative run out of several rounds. */
export function medianBy<T>(items: readonly T[], key: (item: T) => number): T {
  const sorted = [...items].sort((a, b) => key(a) - key(b));
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('medianBy needs at least one item');
  return middle;
}

/**
 * Measure every variant once per round, rounds interleaved (A B C A B C ...), so that drift in the
 * machine's load spreads over all variants instead of biasing the ones measured last.
 */
export async function interleaved<V, R>(variants: readonly V[], rounds: number, measure: (variant: V) => Promise<R>): Promise<R[][]> {
  const results: R[][] = variants.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, variant] of variants.entries()) results[i]?.push(await measure(variant));
  }
  return results;
}

/** Benchmark knobs from the environment, parsed like any config (every problem reported at once). */
export function knobs<S extends z.ZodObject>(schema: S): Readonly<z.infer<S>> {
  return parseConfig(schema, process.env);
}

/** One row of a comparison table: named figures, keyed like the table's columns. */
export interface Measurement {
  readonly name: string;
  readonly values: Readonly<Record<string, number>>;
  readonly note?: string;
}

export interface Column {
  readonly key: string;
  readonly label: string;
  readonly digits?: number;
  /** Print `value / baseline value` next to the figure. */
  readonly ratio?: boolean;
}

/** `value / baseline`, NaN when there is no usable baseline. */
export function ratio(value: number, baseline: number | undefined): number {
  return baseline === undefined || baseline === 0 ? Number.NaN : value / baseline;
}

/** Print a table; the row named `baseline` is the 1.00x every ratio column is relative to. */
export function printComparison(title: string, columns: readonly Column[], rows: readonly Measurement[], baseline: string): void {
  const base = rows.find((r) => r.name === baseline);
  if (base === undefined) throw new Error(`baseline row "${baseline}" is missing from "${title}"`);
  const header = ['', ...columns.flatMap((c) => (c.ratio === true ? [c.label, 'ratio'] : [c.label])), ''];
  const body = rows.map((row) => [
    row === base ? `${row.name} (baseline)` : row.name,
    ...columns.flatMap((c) => cells(c, row.values[c.key], base.values[c.key])),
    row.note ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? '').length)));
  const line = (cellsOfRow: readonly string[]): string =>
    cellsOfRow.map((cell, i) => (i === 0 || i === cellsOfRow.length - 1 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  print(`\n== ${title} ==\n${line(header).trimEnd()}\n${body.map((r) => line(r).trimEnd()).join('\n')}\n`);
}

function cells(column: Column, value: number | undefined, baseValue: number | undefined): string[] {
  const figure = value === undefined ? '-' : value.toFixed(column.digits ?? 1);
  if (column.ratio !== true) return [figure];
  const r = value === undefined ? Number.NaN : ratio(value, baseValue);
  return [figure, Number.isNaN(r) ? '-' : `${r.toFixed(2)}x`];
}

/** Benchmark output goes to stdout as plain text (pino is for the processes under test). */
export function print(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** Resident memory of a process in MB from /proc: now (VmRSS) and its peak so far (VmHWM). */
export function processMemoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Kernel clock ticks per second, the unit of utime and stime in /proc/<pid>/stat (100 on Linux). */
const CLOCK_TICKS = 100;

/** CPU seconds a process has used so far (user + system), from /proc/<pid>/stat; NaN once it is gone. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds of the whole machine so far, busy and idle (all cores), from /proc/stat. */
export function machineCpuSeconds(): { busy: number; idle: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line.split(/\s+/).slice(1).map(Number);
  return { busy: (user + nice + system + irq + softirq + steal) / CLOCK_TICKS, idle: (idle + iowait) / CLOCK_TICKS };
}

/** tests/bench/RESULTS.md, where every run of a benchmark leaves a dated row. */
export const RESULTS_FILE = new URL('./RESULTS.md', import.meta.url);

/**
 * Insert `cells` as the newest row of the first table under the heading `## <section> (` of the
 * results file (`markdown`), after the table's separator line (newest first). Throws naming the
 * section, or the column counts, when the row does not fit the table.
 */
export function insertResultRow(markdown: string, section: string, cells: readonly string[]): string {
  const lines = markdown.split('\n');
  const heading = lines.findIndex((l) => l.startsWith(`## ${section} (`) || l === `## ${section}`);
  if (heading < 0) throw new Error(`results: no section "## ${section}" in RESULTS.md`);
  const header = lines.findIndex((l, i) => i > heading && l.startsWith('| date'));
  const next = lines.findIndex((l, i) => i > heading && l.startsWith('## '));
  if (header < 0 || (next >= 0 && header > next)) throw new Error(`results: section "${section}" has no table whose first column is the date`);
  const columns = (lines[header] ?? '').split('|').length - 2;
  if (cells.length !== columns) throw new Error(`results: section "${section}" has ${columns} columns, the row has ${cells.length}`);
  const row = `| ${cells.map((c) => c.replaceAll('|', '/').replaceAll('\n', ' ')).join(' | ')} |`;
  lines.splice(header + 2, 0, row);
  return lines.join('\n');
}

/** The machine column of a results row: the 1-minute load average now and the core count. */
export function machineCell(): string {
  const [one = ''] = readFileSync('/proc/loadavg', 'utf8').split(' ');
  return `load ${one}, ${String(availableParallelism())} cores`;
}

/** Today's UTC date and time to the minute, the first cell of a results row. */
export function dateCell(now = new Date()): string {
  return now.toISOString().slice(0, 16).replace('T', ' ');
}

/**
 * Record one run in RESULTS.md: `[date, ...cells, machine]` as the newest row of `section`'s first
 * table (BENCH_RESULTS=false: printed only, e.g. for a run with knobs changed to try something).
 */
export function recordResult(section: string, cells: readonly string[]): void {
  const row = [dateCell(), ...cells, machineCell()];
  const write = process.env['BENCH_RESULTS'] !== 'false';
  if (write) writeFileSync(RESULTS_FILE, insertResultRow(readFileSync(RESULTS_FILE, 'utf8'), section, row));
  print(`results row ${write ? 'added to' : '(not written, BENCH_RESULTS=false) for'} tests/bench/RESULTS.md, section ${section}: | ${row.join(' | ')} |`);
}

/** The code column of a results row: BENCH_NOTE when set, else HEAD's short hash and subject (and whether the tree had changes). */
export function codeCell(): string {
  const note = process.env['BENCH_NOTE'];
  if (note !== undefined && note !== '') return note;
  const git = (args: string[]): string => {
    try {
      return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  const head = git(['log', '-1', '--format=%h %s']);
  const subject = head.length > 70 ? `${head.slice(0, 67)}...` : head;
  return `${subject || 'unknown commit'}${git(['status', '--porcelain', '--untracked-files=no']) === '' ? '' : ' + uncommitted changes'}`;
}

/** Run `tasks` with at most `limit` in flight. */
export async function pool(tasks: readonly (() => Promise<unknown>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) await tasks[next++]?.();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}

/** CPU use in one measured window. */
export interface CpuUse {
  /** Wall-clock seconds of the window. */
  readonly seconds: number;
  /** CPU seconds each process used in the window, by name (`bench client`: the bench's own process). */
  readonly processes: ReadonlyMap<string, number>;
  /** Share of the machine's cores that were busy in the window (every process on it, other jobs too), 0..1. */
  readonly busy: number;
}

/** Start a CPU window over the processes `pids` (name → pid, read now) and the bench's own process; the result ends it. */
export function cpuWindow(pids: ReadonlyMap<string, number>): () => CpuUse {
  const counted = new Map(pids);
  const before = new Map([...counted].map(([name, pid]) => [name, processCpuSeconds(pid)]));
  const own = process.cpuUsage();
  const machine = machineCpuSeconds();
  const start = nowMs();
  return () => {
    const processes = new Map([...counted].map(([name, pid]) => [name, processCpuSeconds(pid) - (before.get(name) ?? 0)]));
    const usage = process.cpuUsage(own);
    processes.set('bench client', (usage.user + usage.system) / 1e6);
    const now = machineCpuSeconds();
    const busy = now.busy - machine.busy;
    const idle = now.idle - machine.idle;
    return { seconds: (nowMs() - start) / 1000, processes, busy: busy + idle === 0 ? 0 : busy / (busy + idle) };
  };
}
