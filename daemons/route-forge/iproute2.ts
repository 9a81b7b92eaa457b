/**
 * The kernel behind a narrow port (`Kernel`), spoken to through iproute2 (docs/adr/0008): one
 * `ip -json -force -batch -` per read (route lookups of the node addresses, the rules, the table),
 * one `ip -force -batch -` per write, and a long-running `ip monitor route rule link` for drift. `-force`
 * makes a batch go on past a failed line; its `Command failed -:N` lines say which ones failed.
 * With `netns` every command runs inside that network namespace (`ip -n`): tests and benchmarks.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { normaliseDst, parseLookup, parseRoutes, parseRules } from './kernel-json.js';
import { readCommands } from './commands.js';
import { routeKey, type KernelState, type Lookup } from './model.js';

export interface LineFailure {
  /** Index into the batch's lines (0-based). */
  readonly index: number;
  readonly message: string;
}

export interface KernelRead {
  readonly state: KernelState;
  readonly lookups: ReadonlyMap<string, Lookup>;
}

/** What route-forge needs from the kernel. The fake in tests keeps tables in memory. */
export interface Kernel {
  /** Route lookups of the node addresses, every rule and every route of the table, in one go. */
  read(nodeAddresses: readonly string[], table: number): Promise<KernelRead>;
  /** Route lookups of the node addresses only (cheap: no table dump). */
  lookup(nodeAddresses: readonly string[]): Promise<ReadonlyMap<string, Lookup>>;
  /** Apply batch lines; the kernel refusing some of them does not stop the others. */
  apply(lines: readonly string[]): Promise<LineFailure[]>;
  /** Call `onChange` for each route, rule or link change; resolves once the subscription is in place. */
  watch(table: number, onChange: (event: KernelEvent) => void, signal: AbortSignal): Promise<void>;
}

/**
 * A change the monitor saw: to the dedicated table or its rules, to another route, a link going down
 * or away (IPv4 flushes the routes through it *without* a route notification), or the monitor ended.
 */
export type KernelEvent =
  | { readonly kind: 'table'; readonly route?: RouteEcho | undefined }
  | { readonly kind: 'other' }
  | { readonly kind: 'link-down'; readonly device: string }
  | { readonly kind: 'lost' };

/** A route change of the table as the monitor printed it: added/replaced or deleted, and its routeKey. */
export interface RouteEcho {
  readonly deleted: boolean;
  readonly key: string;
}

const ROUTE_TYPES = new Set(['unicast', 'blackhole', 'unreachable', 'prohibit', 'local', 'broadcast', 'throw', 'nat', 'anycast', 'multicast']);

/** The route of a monitor line about the table (undefined for rule lines). */
function routeEchoOf(line: string, table: number): RouteEcho | undefined {
  if (!new RegExp(`\\btable ${table}\\b`).test(line)) return undefined;
  const deleted = line.startsWith('Deleted ');
  const words = (deleted ? line.slice('Deleted '.length) : line).trim().split(/\s+/);
  const dst = ROUTE_TYPES.has(words[0] ?? '') ? words[1] : words[0];
  if (dst === undefined) return undefined;
  const at = words.indexOf('metric');
  return { deleted, key: routeKey({ dst: normaliseDst(dst), metric: at === -1 ? 0 : Number(words[at + 1] ?? 0) }) };
}

export class IpCommandError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'IpCommandError';
  }
}

/**
 * The failed lines of `ip -force -batch`: each failure prints its message lines and then
 * `Command failed -:N` (N counts from 1).
 */
export function parseBatchFailures(stderr: string): LineFailure[] {
  const failures: LineFailure[] = [];
  let pending: string[] = [];
  for (const line of stderr.split('\n')) {
    const m = /^Command failed (?:-|\S+):(\d+)\s*$/.exec(line);
    if (m !== null) {
      failures.push({ index: Number(m[1]) - 1, message: pending.join('; ') || 'failed' });
      pending = [];
    } else if (line.trim() !== '') {
      pending.push(line.trim());
    }
  }
  return failures;
}

/**
 * What one line of `ip monitor route rule link` is about; undefined for continuation lines and
 * links coming up (nothing of ours can break by that).
 */
export function classifyMonitorLine(line: string, table: number): KernelEvent | undefined {
  if (line === '' || /^\s/.test(line)) return undefined;
  const link = /^(Deleted )?\d+: ([^:@\s]+)(?:@[^:\s]+)?: <([^>]*)>/.exec(line);
  if (link !== null) {
    const flags = (link[3] ?? '').split(',');
    const down = link[1] !== undefined || !flags.includes('UP') || !flags.includes('LOWER_UP');
    return down ? { kind: 'link-down', device: link[2] ?? '' } : undefined;
  }
  return new RegExp(`\\b(table|lookup) ${table}\\b`).test(line) ? { kind: 'table', route: routeEchoOf(line, table) } : { kind: 'other' };
}

export interface IpRoute2Options {
  /** The `ip` binary (default `ip` from PATH). */
  readonly command?: string;
  /** Run every command in this named network namespace (`ip -n`). */
  readonly netns?: string | undefined;
  /** Kill a read or write that takes longer (default 60 s). */
  readonly timeoutMs?: number;
}

interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export class IpRoute2 implements Kernel {
  /** Why the last monitor process ended, for the log line of its restart. */
  lastMonitorExit = '';
  private readonly command: string;
  private readonly prefix: readonly string[];

  constructor(private readonly options: IpRoute2Options = {}) {
    this.command = options.command ?? 'ip';
    this.prefix = options.netns === undefined ? [] : ['-n', options.netns];
  }

  async read(nodeAddresses: readonly string[], table: number): Promise<KernelRead> {
    const { lookups, answers, failures } = await this.batchRead(nodeAddresses, ['rule show', `route show table ${table}`]);
    const [rules, routes] = answers;
    if (rules === undefined) throw new IpCommandError(`ip rule show failed: ${failures[0] ?? ''}`);
    // A table that never held a route "does not exist": it is empty.
    if (routes === undefined && !/does not exist/.test(failures[1] ?? ''))
      throw new IpCommandError(`ip route show table ${table} failed: ${failures[1] ?? ''}`);
    return { lookups, state: { rules: parseRules(rules), routes: routes === undefined ? [] : parseRoutes(routes) } };
  }

  async lookup(nodeAddresses: readonly string[]): Promise<ReadonlyMap<string, Lookup>> {
    if (nodeAddresses.length === 0) return new Map();
    return (await this.batchRead(nodeAddresses, [])).lookups;
  }

  /**
   * One `ip -json -force -batch -`: a lookup per address, then `extra` commands (after the lookups: a
   * `route show table` before them would leave its filter behind). Answers of failed commands are
   * undefined, with the kernel's message in `failures`.
   */
  private async batchRead(
    nodeAddresses: readonly string[],
    extra: readonly string[],
  ): Promise<{ lookups: Map<string, Lookup>; answers: (string | undefined)[]; failures: (string | undefined)[] }> {
    const lines = [...readCommands(nodeAddresses), ...extra];
    const res = await this.run(['-json', '-force', '-batch', '-'], lines.join('\n') + '\n');
    const failed = new Map(parseBatchFailures(res.stderr).map((f) => [f.index, f.message]));
    const outputs = res.stdout.split('\n').filter((l) => l.trim() !== '');
    if (outputs.length !== lines.length - failed.size) {
      throw new IpCommandError(`ip -batch read: ${lines.length} commands, ${failed.size} failed, but ${outputs.length} answers (stderr: ${res.stderr.trim()})`);
    }
    let next = 0;
    const answers = lines.map((_, i) => (failed.has(i) ? undefined : outputs[next++]));
    const lookups = new Map<string, Lookup>();
    nodeAddresses.forEach((ip, i) => {
      const answer = answers[i];
      lookups.set(ip, answer === undefined ? { ok: false, error: failed.get(i) ?? 'failed' } : parseLookup(answer));
    });
    const offset = nodeAddresses.length;
    return { lookups, answers: answers.slice(offset), failures: extra.map((_, i) => failed.get(offset + i)) };
  }

  async apply(lines: readonly string[]): Promise<LineFailure[]> {
    if (lines.length === 0) return [];
    const res = await this.run(['-force', '-batch', '-'], lines.join('\n') + '\n');
    const failures = parseBatchFailures(res.stderr);
    if (res.code !== 0 && failures.length === 0) throw new IpCommandError(`ip -batch exited with ${res.code}: ${res.stderr.trim()}`);
    return failures;
  }

  async watch(table: number, onChange: (event: KernelEvent) => void, signal: AbortSignal): Promise<void> {
    const child = spawn(this.command, [...this.prefix, 'monitor', 'route', 'rule', 'link'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const stop = (): void => {
      child.kill('SIGTERM');
    };
    signal.addEventListener('abort', stop, { once: true });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-2000);
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      const event = classifyMonitorLine(line, table);
      if (event !== undefined) onChange(event);
    });
    child.once('close', (code) => {
      signal.removeEventListener('abort', stop);
      if (!signal.aborted) {
        this.lastMonitorExit = `ip monitor exited with ${code ?? 'a signal'}: ${stderr.trim()}`;
        onChange({ kind: 'lost' });
      }
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) => reject(new IpCommandError(`cannot start ${this.command} monitor: ${err.message}`, { cause: err })));
    });
    await subscribed(child.pid ?? 0, signal);
  }

  private run(args: readonly string[], stdin: string): Promise<RunResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.command, [...this.prefix, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      const timer = setTimeout(() => child.kill('SIGKILL'), this.options.timeoutMs ?? 60_000);
      child.stdout.on('data', (b: Buffer) => out.push(b));
      child.stderr.on('data', (b: Buffer) => err.push(b));
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(new IpCommandError(`cannot run ${this.command}: ${e.message}`, { cause: e }));
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
      });
      child.stdin.on('error', () => undefined); // the close handler reports what went wrong
      child.stdin.end(stdin);
    });
  }
}

/**
 * Resolves once process `pid` holds a netlink socket bound to multicast groups (its monitor
 * subscription), as /proc/PID/net/netlink shows; gives up quietly after 2 s (the periodic resync
 * still catches what a late subscription misses).
 */
async function subscribed(pid: number, signal: AbortSignal): Promise<void> {
  const until = Date.now() + 2_000;
  while (!signal.aborted && Date.now() < until) {
    const table = await readFile(`/proc/${pid}/net/netlink`, 'utf8').catch(() => '');
    const bound = table.split('\n').some((line) => {
      const cols = line.trim().split(/\s+/);
      return cols[2] === String(pid) && cols[3] !== undefined && /^[0-9a-f]+$/i.test(cols[3]) && Number.parseInt(cols[3], 16) !== 0;
    });
    if (bound) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
