/**
 * Function host benchmark: cold start (spawn to first 200 on /health/readiness) and an empty handler's
 * throughput and latency over loopback. The empty function (sample-echo's GET /empty, compiled) is the
 * baseline later benchmarks (admission, audit) report their ratios against.
 *
 * Knobs: BENCH_COLD_RUNS, BENCH_ROUNDS, BENCH_REQUESTS, BENCH_MAX_SECONDS, BENCH_CONCURRENCY, BENCH_WARMUP.
 * Worst case: about 3 x BENCH_ROUNDS x BENCH_MAX_SECONDS of load plus 3 x BENCH_COLD_RUNS process starts.
 */
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { binaryHeaders } from '../../shared/runtime/testing/index.js';
import { runLoad, type LoadResult, type LoadSpec } from './load.js';
import { EMPTY_FUNCTION_BASELINE, interleaved, knobs, medianBy, print, printComparison, summarize, timed, type Measurement } from './lib.js';
import { BARE_ARGS, coldStartMs, compiledArgs, startServer, tsxArgs } from './processes.js';

const settings = knobs(
  z.object({
    BENCH_COLD_RUNS: env.int(7, 1).describe('Cold starts per variant; the median is reported'),
    BENCH_ROUNDS: env.int(3, 1).describe('Load runs per variant, interleaved; the run with the median req/s is reported'),
    BENCH_REQUESTS: env.int(10_000, 100).describe('Measured requests per load run at most'),
    BENCH_MAX_SECONDS: env.int(5, 1).describe('Measured seconds per load run at most'),
    BENCH_CONCURRENCY: env.int(8, 1).describe('Keep-alive connections per load run'),
    BENCH_WARMUP: env.int(2_000, 0).describe('Unmeasured requests before each load run'),
  }),
);

const ENTRY = 'functions/sample-echo/index.ts';

async function coldStarts(variants: ReadonlyArray<readonly [string, readonly string[]]>): Promise<Measurement[]> {
  const runs = await interleaved(variants, settings.BENCH_COLD_RUNS, ([, args]) => coldStartMs(args));
  return variants.map(([name], i) => {
    const s = summarize(runs[i] ?? []);
    return { name, values: { median: s.p50, min: s.min, max: s.max } };
  });
}

function loadRow(name: string, result: LoadResult): Measurement {
  const failures = result.failed > 0 ? `${result.failed} failed: ${JSON.stringify(result.statuses)}` : '';
  return {
    name,
    values: { rps: result.requestsPerSecond, p50: result.latencyMs.p50, p99: result.latencyMs.p99, n: result.completed },
    note: [`stopped by ${result.stoppedBy}`, failures].filter(Boolean).join('; '),
  };
}

async function throughput(compiled: readonly string[]): Promise<Measurement[]> {
  const load = {
    concurrency: settings.BENCH_CONCURRENCY,
    requests: settings.BENCH_REQUESTS,
    maxMs: settings.BENCH_MAX_SECONDS * 1000,
    warmup: settings.BENCH_WARMUP,
  };
  const bare = await startServer(BARE_ARGS);
  const fn = await startServer(compiled);
  try {
    const event = { method: 'POST', headers: binaryHeaders({ id: 'bench', type: 'bench.ping' }), body: '{"vm":"alpha"}' };
    const variants: ReadonlyArray<readonly [string, LoadSpec]> = [
      ['bare node:http (no framework)', { ...load, url: `${bare.url}/empty` }],
      [EMPTY_FUNCTION_BASELINE, { ...load, url: `${fn.url}/empty` }],
      ['binary CloudEvent echo (POST /)', { ...load, ...event, url: fn.url }],
    ];
    const runs = await interleaved(variants, settings.BENCH_ROUNDS, ([, spec]) => runLoad(spec));
    return variants.map(([name], i) =>
      loadRow(
        name,
        medianBy(runs[i] ?? [], (r) => r.requestsPerSecond),
      ),
    );
  } finally {
    await Promise.all([bare.stop(), fn.stop()]);
  }
}

async function main(): Promise<void> {
  const build = await timed(() => compiledArgs(ENTRY));
  print(`function-host benchmark: node ${process.version}, ${settings.BENCH_CONCURRENCY} connections, loopback`);
  print(`compiled ${ENTRY} with tsc in ${(build.ms / 1000).toFixed(1)} s -> ${build.value.join(' ')}`);

  const cold = await coldStarts([
    ['bare node:http', BARE_ARGS],
    ['sample-echo compiled (node dist/...js)', build.value],
    ['sample-echo from source (node --import tsx)', tsxArgs(ENTRY)],
  ]);
  printComparison(
    `Cold start: spawn to first 200 on /health/readiness, ${settings.BENCH_COLD_RUNS} runs each (ms)`,
    [
      { key: 'median', label: 'median', ratio: true },
      { key: 'min', label: 'min' },
      { key: 'max', label: 'max' },
    ],
    cold,
    'bare node:http',
  );

  printComparison(
    `Requests over keep-alive loopback, compiled sample-echo (median-req/s run of ${settings.BENCH_ROUNDS})`,
    [
      { key: 'rps', label: 'req/s', digits: 0, ratio: true },
      { key: 'p50', label: 'p50 ms', digits: 3, ratio: true },
      { key: 'p99', label: 'p99 ms', digits: 3, ratio: true },
      { key: 'n', label: 'requests', digits: 0 },
    ],
    await throughput(build.value),
    EMPTY_FUNCTION_BASELINE,
  );
}

await main();
