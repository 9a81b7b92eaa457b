/**
 * Processes under benchmark: a function compiled the way it ships (tsc, then plain node), bundled into
 * one file (shared/bundle), run from source with tsx, and a bare node:http server as the floor.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadAll } from 'js-yaml';
import { parseQuantity } from '../../shared/api/k8s/quantity.js';
import { bundleEntries, type PackageMode } from '../../shared/bundle/index.js';
import { listeningPort, REPO_ROOT, send, startNodeProcess, type FunctionProcess } from '../../shared/runtime/testing/index.js';
import { nowMs } from './lib.js';

const run = promisify(execFile);

/** Where benchmark builds go: inside `dist/` (ignored by git), apart from `npm run build`'s output. */
const BUILD_DIR = join(REPO_ROOT, 'dist', '.bench');

/**
 * Compile one function entry module (and only what it imports) with the build settings, as the image
 * would run it; returns node's arguments for the compiled module.
 */
export async function compiledArgs(entry: string): Promise<string[]> {
  await mkdir(BUILD_DIR, { recursive: true });
  const tsconfig = join(BUILD_DIR, 'tsconfig.json');
  const config = {
    extends: '../../tsconfig.build.json',
    compilerOptions: { outDir: '.', rootDir: '../..', noEmit: false, sourceMap: false },
    include: [],
    files: [join('../..', entry)],
  };
  await writeFile(tsconfig, JSON.stringify(config, null, 2));
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  // tsc emits even with type errors elsewhere; only a missing output fails the benchmark.
  await run(process.execPath, [tsc, '-p', tsconfig]).catch(() => undefined);
  const output = join(BUILD_DIR, entry.replace(/\.ts$/, '.js'));
  if (!existsSync(output)) throw new Error(`compiling ${entry} produced no ${output}`);
  return [output];
}

/**
 * Bundle one entry with shared/bundle into `dist/.bench/bundle-<mode>/`; returns node's arguments for
 * the bundle (one file to load; with `external`, npm packages are still resolved and loaded one by one).
 */
export async function bundledArgs(entry: string, packages: PackageMode): Promise<string[]> {
  const files = await bundleEntries({ root: REPO_ROOT, entries: [entry], outdir: join(BUILD_DIR, `bundle-${packages}`), packages });
  const output = files.get(entry);
  if (output === undefined || !existsSync(output)) throw new Error(`bundling ${entry} produced no ${output ?? 'file'}`);
  return [output];
}

export function tsxArgs(entry: string): string[] {
  return ['--import', 'tsx', entry];
}

/** A bare node:http server answering 204 (200 on the readiness path) and logging its port like the host. */
const BARE_SERVER = `
import { createServer } from 'node:http';
const server = createServer((req, res) => { res.statusCode = req.url === '/health/readiness' ? 200 : 204; res.end(); });
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ msg: 'listening', port: server.address().port }) + '\\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

export const BARE_ARGS: readonly string[] = ['--input-type=module', '-e', BARE_SERVER];

/** The same two answers from a bare express 5 app: the framework's own cost, without the host's. */
const BARE_EXPRESS_SERVER = `
import express from 'express';
const app = express();
app.get('/health/readiness', (req, res) => { res.status(200).end(); });
app.get('/empty', (req, res) => { res.status(204).end(); });
const server = app.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ msg: 'listening', port: server.address().port }) + '\\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

export const BARE_EXPRESS_ARGS: readonly string[] = ['--input-type=module', '-e', BARE_EXPRESS_SERVER];

/** CPU time (user + system) a process has used so far, in ms; undefined where /proc is missing. */
export function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name (which may hold spaces, closed by the last ')'): utime is the 12th, stime the 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

export interface Running {
  readonly proc: FunctionProcess;
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Start a server process on a free loopback port and wait until its readiness path answers 200; in
 * `cage` when given (removed when the server stops).
 */
export async function startServer(args: readonly string[], env: Record<string, string> = {}, cage?: MemoryCage): Promise<Running> {
  const proc = startNodeProcess(args, {
    env: { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    ...(cage === undefined ? {} : { enter: cage.enterCommand }),
  });
  const stopped = async (): Promise<void> => {
    await stop(proc);
    cage?.remove();
  };
  try {
    const url = `http://127.0.0.1:${await listeningPort(proc)}`;
    await untilReady(`${url}/health/readiness`);
    return { proc, url, stop: stopped };
  } catch (err: unknown) {
    await stopped();
    throw err;
  }
}

/** Pin every thread of a running process to `cpus` (taskset's list: `1`, `0,2-7`). */
export async function pinProcess(pid: number | undefined, cpus: string): Promise<void> {
  if (pid === undefined) throw new Error('no process to pin');
  await run('taskset', ['-a', '-p', '-c', cpus, String(pid)]);
}

/**
 * Before a measured run: `measured` alone on `cpu`, every other server moved to the other CPUs (left
 * where they are on a one-CPU machine). Servers that wait between their own runs are not idle for
 * V8: a few seconds after its load stops, a node process's memory reducer runs a full, compacting GC
 * on its threads, tens of ms; on the measured core that took the core from the function measured
 * then (the admission bench's in-memory row, run right after the empty function's, paused in every
 * round: tests/bench/RESULTS.md). A deployed function has no such neighbours on its core.
 */
export async function measureAlone(measured: Running, servers: readonly Running[], cpu: number): Promise<void> {
  const others = Array.from({ length: availableParallelism() }, (_, i) => i).filter((i) => i !== cpu);
  await pinProcess(measured.proc.child.pid, String(cpu));
  if (others.length === 0) return;
  for (const s of servers) if (s !== measured) await pinProcess(s.proc.child.pid, others.join(','));
}

export interface ColdStart {
  /** Milliseconds from spawn to the first 200 on /health/readiness. */
  readonly ms: number;
  /** Resident memory right then, MiB (undefined where /proc is missing). */
  readonly rssMiB: number | undefined;
}

/** Start a server (with `env` beside the defaults), time it until ready, read its resident memory, stop it. */
export async function coldStart(args: readonly string[], env: Record<string, string> = {}): Promise<ColdStart> {
  const start = nowMs();
  const server = await startServer(args, env);
  const ms = nowMs() - start;
  const rssMiB = residentMiB(server.proc.child.pid);
  await server.stop();
  return { ms, rssMiB };
}

/**
 * The literal env values a Knative Service (`knative/functions/<name>.yaml`) gives its container,
 * NODE_OPTIONS among them, so that a benchmark runs the function as it ships.
 */
export function knativeServiceEnv(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of firstContainer(file)?.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

type ManifestContainer = {
  env?: Array<{ name: string; value?: string }>;
  resources?: { limits?: { memory?: string } };
};

/** The first container of the pod template of the manifest's first workload (Knative Service, Deployment, DaemonSet). */
function firstContainer(file: string): ManifestContainer | undefined {
  const docs = loadAll(readFileSync(join(REPO_ROOT, file), 'utf8')) as Array<{ spec?: { template?: { spec?: { containers?: ManifestContainer[] } } } } | null>;
  return docs.map((d) => d?.spec?.template?.spec?.containers?.[0]).find((c) => c !== undefined);
}

/** The memory limit, in bytes, a manifest's workload gives its (first) container; undefined when it sets none. */
export function containerMemoryLimit(file: string): number | undefined {
  return parseQuantity(firstContainer(file)?.resources?.limits?.memory);
}

/**
 * A memory cgroup of its own for one measured process, limited as its manifest limits its container.
 * Node sizes V8's heap from the cgroup's limit at start (in a 256 MiB cgroup its heap limit is 275 MB
 * on this machine, unconstrained 4.4 GB), and V8 collects sooner under a smaller limit: the audit's
 * peak was 138 against 219 MB in the same hour, so a process measured outside the limit is not the
 * one that ships. The process enters the cgroup itself (`enterCommand`); what it writes to stdout must
 * go through a pipe to a writer outside the cgroup, as a container's stdout goes to its runtime,
 * or the page cache of the written file is charged to the cgroup and fills it.
 */
export interface MemoryCage {
  readonly limitBytes: number;
  /** A shell command that moves the shell running it into the cgroup (before it execs the process). */
  readonly enterCommand: string;
  /** Most bytes the cgroup held so far (anonymous and page cache), as the kernel counts toward the limit. */
  peakBytes(): number | undefined;
  /** How many times the cgroup's usage hit the limit (cgroup v1; 0 where the kernel does not say). */
  limitHits(): number;
  /** Remove the cgroup (its processes must have exited). */
  remove(): void;
}

/** Where this process's memory cgroup is and how its files are named (cgroup v1 or v2). */
function memoryCgroupBase(): { dir: string; limit: string; peak: string; hits: string | undefined } | string {
  const lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  const v1 = lines.map((l) => /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:(.*)$/.exec(l)?.[1]).find((p) => p !== undefined);
  if (v1 !== undefined && existsSync(join('/sys/fs/cgroup/memory', v1, 'memory.limit_in_bytes'))) {
    return { dir: join('/sys/fs/cgroup/memory', v1), limit: 'memory.limit_in_bytes', peak: 'memory.max_usage_in_bytes', hits: 'memory.failcnt' };
  }
  const v2 = lines.map((l) => /^0::(.*)$/.exec(l)?.[1]).find((p) => p !== undefined);
  if (v2 !== undefined && existsSync(join('/sys/fs/cgroup', v2, 'memory.max'))) {
    return { dir: join('/sys/fs/cgroup', v2), limit: 'memory.max', peak: 'memory.peak', hits: undefined };
  }
  return 'no memory cgroup controller found for this process (/proc/self/cgroup)';
}

/** A cgroup `name` limited to `limitBytes`, or why none could be made (the bench then runs unconstrained and says so). */
export function memoryCage(name: string, limitBytes: number): MemoryCage | { readonly unavailable: string } {
  const base = memoryCgroupBase();
  if (typeof base === 'string') return { unavailable: base };
  const dir = join(base.dir, `bench-${name}-${process.pid}`);
  const read = (file: string): number | undefined => {
    try {
      return Number(readFileSync(join(dir, file), 'utf8').trim());
    } catch {
      return undefined;
    }
  };
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, base.limit), String(limitBytes));
  } catch (err: unknown) {
    return { unavailable: `cannot make the memory cgroup ${dir}: ${err instanceof Error ? err.message : String(err)}` };
  }
  return {
    limitBytes,
    enterCommand: `echo $$ > '${join(dir, 'cgroup.procs')}'`,
    peakBytes: () => read(base.peak),
    limitHits: () => (base.hits === undefined ? 0 : (read(base.hits) ?? 0)),
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        // Still busy (a process has not exited yet): left for the next boot; the name carries the pid.
      }
    },
  };
}

/** A unit's process as a bench runs it: in a cgroup limited as its container, or why not. */
export interface Caged {
  readonly cage: MemoryCage | undefined;
  /** startNodeProcess's options that start the process in the cgroup (none when uncaged). */
  readonly start: { readonly enter?: string };
  /** Remove the cgroup once the process exited (nothing when uncaged). */
  remove(): void;
  /** What the bench prints: the limit it runs under, or that it runs without and why. */
  readonly note: string;
  /** What the bench prints once the process ran: the cgroup's peak and how often it hit the limit, or that there was none. */
  usage(): string;
}

/**
 * A memory cgroup for a unit's process, limited as `manifest` (a Knative Service, Deployment or
 * DaemonSet) limits its first container; `unless` names a reason to run without one (the bench says so).
 */
export function cageFor(manifest: string, name: string, unless?: string): Caged {
  const limit = containerMemoryLimit(manifest);
  const made =
    unless !== undefined ? { unavailable: unless } : limit === undefined ? { unavailable: `${manifest} sets no memory limit` } : memoryCage(name, limit);
  if ('unavailable' in made) {
    return {
      cage: undefined,
      start: {},
      remove: () => undefined,
      note: `WITHOUT its container's memory limit (${made.unavailable}): node sizes V8's heap from the machine's memory`,
      usage: () => 'memory: no cgroup (no limit)',
    };
  }
  const mib = (bytes: number | undefined): string => (bytes === undefined ? '?' : (bytes / 2 ** 20).toFixed(0));
  return {
    cage: made,
    start: { enter: made.enterCommand },
    remove: () => made.remove(),
    note: `in a memory cgroup limited as its container in ${manifest} (${mib(made.limitBytes)} MiB): node sizes V8's heap from it`,
    usage: () =>
      `memory cgroup: limit ${mib(made.limitBytes)} MiB, most held ${mib(made.peakBytes())} MiB (its memory and the page cache it wrote, as the kernel counts toward the limit), limit reached ${made.limitHits()} times`,
  };
}

/** VmRSS of a process from /proc, in MiB. */
export function residentMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const kib = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? undefined : Number(kib) / 1024;
  } catch {
    return undefined;
  }
}

async function untilReady(url: string): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const status = await send(url).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`${url} never answered 200`);
}

async function stop(proc: FunctionProcess): Promise<void> {
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill(), 10_000);
  await proc.exited;
  clearTimeout(timer);
}
