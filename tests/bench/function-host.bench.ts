/**
 * Function host benchmark: cold start (spawn to first 200 on /health/readiness) with the resident memory
 * then, and an empty handler's throughput and latency over loopback, at saturation and paced. The empty
 * function (sample-echo's GET /empty, bundled as the image runs it) is the baseline later benchmarks
 * (admission, audit) report their ratios against; beside it bare node:http and a bare express 5 app with
 * the same route, each with the server's CPU time per request (from /proc, 10 ms ticks).
 *
 * The cold start also of a function as it ships with client-node loaded for its credentials (the
 * audit, bundled, its Knative Service's env, a kubeconfig whose apiserver it does not ask at start).
 * Each run adds a dated row to tests/bench/RESULTS.md (section function-host; BENCH_RESULTS=false: not).
 *
 * Knobs: BENCH_COLD_RUNS, BENCH_ROUNDS, BENCH_REQUESTS, BENCH_MAX_SECONDS, BENCH_CONCURRENCY, BENCH_WARMUP,
 * BENCH_PACED_RPS, BENCH_CPU_PROFILE.
 * Worst case: about 5 x BENCH_ROUNDS x BENCH_MAX_SECONDS of load, 2 x BENCH_MAX_SECONDS profiled, plus
 * 5 x BENCH_COLD_RUNS process starts.
 */
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { binaryHeaders } from '../../shared/runtime/testing/index.js';
import { runLoad, type LoadResult, type LoadSpec } from './load.js';
import {
  codeCell,
  EMPTY_FUNCTION_BASELINE,
  interleaved,
  knobs,
  medianBy,
  print,
  printComparison,
  recordResult,
  summarize,
  timed,
  type Measurement,
} from './lib.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuProfileArgs, formatProfile, summarizeProfileDir } from './cpu-profile.js';
import { codeCacheState, writeCodeCache } from '../../shared/bundle/index.js';
import {
  BARE_ARGS,
  BARE_EXPRESS_ARGS,
  bundledArgs,
  coldStart,
  compiledArgs,
  cpuMs,
  knativeServiceEnv,
  startServer,
  tsxArgs,
  type Running,
} from './processes.js';

const settings = knobs(
  z.object({
    BENCH_COLD_RUNS: env.int(7, 1).describe('Cold starts per variant; the median is reported'),
    BENCH_ROUNDS: env.int(3, 1).describe('Load runs per variant, interleaved; the run with the median req/s is reported'),
    BENCH_REQUESTS: env.int(10_000, 100).describe('Measured requests per load run at most'),
    BENCH_MAX_SECONDS: env.int(5, 1).describe('Measured seconds per load run at most'),
    BENCH_CONCURRENCY: env.int(8, 1).describe('Keep-alive connections per load run'),
    BENCH_WARMUP: env.int(2_000, 0).describe('Unmeasured requests before each load run'),
    BENCH_PACED_RPS: env.int(1_000, 1).describe('Rate of the paced run (latency at a steady load, not at saturation)'),
    BENCH_CPU_PROFILE: env.bool(true).describe('Also load the empty route and the binary echo once under --cpu-prof and print the top self-time frames'),
  }),
);

const ENTRY = 'functions/sample-echo/index.ts';
/** A function as it ships with client-node loaded for its credentials (the audit: KubeConfig at init, informers on first use). */
const SHIPPED_ENTRY = 'functions/audit/index.ts';
const SHIPPED = 'audit bundled as it ships (client-node KubeConfig, its Service env)';

/**
 * A kubeconfig whose apiserver is never asked at start (the audit's informers start with its first
 * batch): the cold start is the process's own, not a cluster's. Port 9 (discard) on loopback.
 */
async function idleKubeconfig(dir: string): Promise<string> {
  const file = join(dir, 'kubeconfig');
  await writeFile(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}}]',
      'users: [{name: u, user: {token: bench}}]',
      'contexts: [{name: c, context: {cluster: c, user: u}}]',
      'current-context: c',
      '',
    ].join('\n'),
  );
  return file;
}
const BARE_EXPRESS = 'bare express 5 app (same route)';

const ECHO_EVENT = { method: 'POST', headers: binaryHeaders({ id: 'bench', type: 'bench.ping' }), body: '{"vm":"alpha"}' } as const;

type ColdVariant = readonly [name: string, args: readonly string[], env?: Record<string, string>];

async function coldStarts(variants: readonly ColdVariant[]): Promise<Measurement[]> {
  const runs = await interleaved(variants, settings.BENCH_COLD_RUNS, ([, args, env]) => coldStart(args, env));
  return variants.map(([name], i) => {
    const s = summarize((runs[i] ?? []).map((r) => r.ms));
    const rss = summarize((runs[i] ?? []).flatMap((r) => (r.rssMiB === undefined ? [] : [r.rssMiB])));
    return { name, values: { median: s.p50, min: s.min, max: s.max, rss: rss.p50 } };
  });
}

/** A load run with the server's CPU time per request (warm-up included in both counts), in µs. */
interface CpuLoad extends LoadResult {
  readonly cpuUsPerRequest: number;
}

async function loadWithCpu(server: Running, spec: LoadSpec): Promise<CpuLoad> {
  const pid = server.proc.child.pid;
  const before = cpuMs(pid);
  const result = await runLoad(spec);
  const after = cpuMs(pid);
  const requests = result.completed + result.failed + (spec.warmup ?? 0);
  const cpuUsPerRequest = before === undefined || after === undefined ? NaN : ((after - before) * 1000) / requests;
  return { ...result, cpuUsPerRequest };
}

function loadRow(name: string, result: CpuLoad): Measurement {
  const failures = result.failed > 0 ? `${result.failed} failed: ${JSON.stringify(result.statuses)}` : '';
  return {
    name,
    values: { rps: result.requestsPerSecond, p50: result.latencyMs.p50, p99: result.latencyMs.p99, cpu: result.cpuUsPerRequest, n: result.completed },
    note: [`stopped by ${result.stoppedBy}`, failures].filter(Boolean).join('; '),
  };
}

async function throughput(args: readonly string[]): Promise<Measurement[]> {
  const load = {
    concurrency: settings.BENCH_CONCURRENCY,
    requests: settings.BENCH_REQUESTS,
    maxMs: settings.BENCH_MAX_SECONDS * 1000,
    warmup: settings.BENCH_WARMUP,
  };
  const bare = await startServer(BARE_ARGS);
  const bareExpress = await startServer(BARE_EXPRESS_ARGS);
  const fn = await startServer(args);
  try {
    // Paced: every connection starts a request each `intervalMs`, so all of them together send BENCH_PACED_RPS.
    const paced = { ...load, intervalMs: (1000 * settings.BENCH_CONCURRENCY) / settings.BENCH_PACED_RPS };
    const variants: ReadonlyArray<readonly [string, Running, LoadSpec]> = [
      ['bare node:http (no framework)', bare, { ...load, url: `${bare.url}/empty` }],
      [BARE_EXPRESS, bareExpress, { ...load, url: `${bareExpress.url}/empty` }],
      [EMPTY_FUNCTION_BASELINE, fn, { ...load, url: `${fn.url}/empty` }],
      ['binary CloudEvent echo (POST /)', fn, { ...load, ...ECHO_EVENT, url: fn.url }],
      [`bare node:http at ${settings.BENCH_PACED_RPS} req/s`, bare, { ...paced, url: `${bare.url}/empty` }],
      [`empty function at ${settings.BENCH_PACED_RPS} req/s`, fn, { ...paced, url: `${fn.url}/empty` }],
    ];
    const runs = await interleaved(variants, settings.BENCH_ROUNDS, ([, server, spec]) => loadWithCpu(server, spec));
    return variants.map(([name], i) =>
      loadRow(
        name,
        medianBy(runs[i] ?? [], (r) => r.requestsPerSecond),
      ),
    );
  } finally {
    await Promise.all([bare.stop(), bareExpress.stop(), fn.stop()]);
  }
}

/**
 * Where a request's time goes: the bundled function under `--cpu-prof`, loaded once on the empty route
 * and once with the binary echo (not a measured row: the profiler slows it down).
 */
async function profile(args: readonly string[]): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'function-host-profile-'));
  try {
    const fn = await startServer([...cpuProfileArgs(dir), ...args]);
    const load = {
      concurrency: settings.BENCH_CONCURRENCY,
      requests: settings.BENCH_REQUESTS,
      maxMs: settings.BENCH_MAX_SECONDS * 1000,
      warmup: settings.BENCH_WARMUP,
    };
    try {
      await runLoad({ ...load, url: `${fn.url}/empty` });
      await runLoad({ ...load, ...ECHO_EVENT, url: fn.url });
    } finally {
      await fn.stop(); // the profile is written as the process exits
    }
    print(formatProfile(`CPU profile of bundled sample-echo under load (GET /empty, then the binary echo)`, summarizeProfileDir(dir, 20)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const build = await timed(() => compiledArgs(ENTRY));
  print(`function-host benchmark: node ${process.version}, ${settings.BENCH_CONCURRENCY} connections, loopback`);
  print(`compiled ${ENTRY} with tsc in ${(build.ms / 1000).toFixed(1)} s -> ${build.value.join(' ')}`);

  const bundled = await timed(() => bundledArgs(ENTRY, 'bundled'));
  const external = await bundledArgs(ENTRY, 'external');
  print(
    `bundled ${ENTRY} with esbuild in ${(bundled.ms / 1000).toFixed(1)} s -> ${bundled.value.join(' ')} (code cache: ${await codeCacheState(bundled.value[0] ?? '')})`,
  );
  const shipped = await bundledArgs(SHIPPED_ENTRY, 'bundled');
  const shippedEnv = knativeServiceEnv('knative/functions/audit.yaml');
  // The image's code cache is made with the Service's V8 flags (skaffold.yaml), so is this one.
  await writeCodeCache(shipped[0] ?? '', shippedEnv['NODE_OPTIONS']);
  const kubeDir = await mkdtemp(join(tmpdir(), 'function-host-kubeconfig-'));
  const cold = await coldStarts([
    ['bare node:http', BARE_ARGS],
    [SHIPPED, shipped, { ...shippedEnv, KUBECONFIG: await idleKubeconfig(kubeDir) }],
    ['sample-echo bundled, packages inlined (one file)', bundled.value],
    ['sample-echo bundled, packages external', external],
    ['sample-echo compiled (node dist/...js)', build.value],
    ['sample-echo from source (node --import tsx)', tsxArgs(ENTRY)],
  ]);
  printComparison(
    `Cold start: spawn to first 200 on /health/readiness, ${settings.BENCH_COLD_RUNS} runs each (ms), and resident memory then`,
    [
      { key: 'median', label: 'median', ratio: true },
      { key: 'min', label: 'min' },
      { key: 'max', label: 'max' },
      { key: 'rss', label: 'RSS MiB', ratio: true },
    ],
    cold,
    'bare node:http',
  );
  await rm(kubeDir, { recursive: true, force: true });

  const rows = await throughput(bundled.value);
  printComparison(
    `Requests over keep-alive loopback, bundled sample-echo as the image runs it (median-req/s run of ${settings.BENCH_ROUNDS})`,
    [
      { key: 'rps', label: 'req/s', digits: 0, ratio: true },
      { key: 'p50', label: 'p50 ms', digits: 3, ratio: true },
      { key: 'p99', label: 'p99 ms', digits: 3, ratio: true },
      { key: 'cpu', label: 'server CPU µs/req', digits: 1, ratio: true },
      { key: 'n', label: 'requests', digits: 0 },
    ],
    rows,
    EMPTY_FUNCTION_BASELINE,
  );
  // The target: the host adds at most 15% CPU per request over a bare express 5 app with the same route.
  const cpuOf = (name: string): number => rows.find((r) => r.name === name)?.values['cpu'] ?? NaN;
  const overhead = cpuOf(EMPTY_FUNCTION_BASELINE) / cpuOf(BARE_EXPRESS) - 1;
  print(`host CPU per request over bare express 5: ${(overhead * 100).toFixed(1)}% (target <= 15%)`);
  const n0 = (v: number | undefined): string => (v ?? NaN).toLocaleString('en-US', { maximumFractionDigits: 0 });
  const rowOf = (name: string): Measurement['values'] => rows.find((r) => r.name === name)?.values ?? {};
  const coldOf = (name: string): Measurement['values'] => cold.find((r) => r.name === name)?.values ?? {};
  const empty = rowOf(EMPTY_FUNCTION_BASELINE);
  const echo = rowOf('binary CloudEvent echo (POST /)');
  recordResult('function-host', [
    codeCell(),
    `${n0(empty['rps'])} req/s, ${(empty['cpu'] ?? NaN).toFixed(1)} µs/req (bare express ${n0(rowOf(BARE_EXPRESS)['rps'])}, bare node:http ${n0(rowOf('bare node:http (no framework)')['rps'])})`,
    `${n0(echo['rps'])} req/s, ${(echo['cpu'] ?? NaN).toFixed(1)} µs/req`,
    `${n0(coldOf(SHIPPED)['median'])} ms, ${(coldOf(SHIPPED)['rss'] ?? NaN).toFixed(1)} MiB (bare node:http ${n0(coldOf('bare node:http')['median'])} ms, ${(coldOf('bare node:http')['rss'] ?? NaN).toFixed(1)} MiB)`,
  ]);

  if (settings.BENCH_CPU_PROFILE) await profile(bundled.value);
}

await main();
