/**
 * Admission benchmark: AdmissionReviews of a typical VirtualMachine (CREATE) through the validating
 * webhook path, the function bundled as the image runs it and pinned to one CPU core, against the
 * empty function bundled and pinned the same way. Two admission rows: lookups answered in memory
 * (decision + transport only), and lookups from a real apiserver through the function's cache
 * (LOOKUP_CACHE_TTL_MS, as deployed).
 * Targets (issue 4): p99 under 5 ms at 1,000 reviews/s on one core; over 3,000 reviews/s saturated.
 * Memory (issue 37): RSS idle (caches warm, before the load) and peak (VmHWM after it) of each process;
 * the admission function adds its decisions and lookup cache to the host, so its targets are the empty
 * function's own figures plus 10 MB idle and 20 MB at peak.
 *
 * Paced load is open-loop (requests sent on a fixed schedule whatever the answers), latency measured
 * from each request's send. Each run has the core to the function it measures: the other function
 * processes, idle then, are moved to the other CPUs (`measureAlone`: their idle GCs no longer pause
 * it). Plain HTTP for every row; the deployed webhook adds TLS on keep-alive connections.
 *
 * Knobs: BENCH_ROUNDS, BENCH_MAX_SECONDS, BENCH_CONCURRENCY, BENCH_WARMUP, BENCH_RATE, BENCH_CPU,
 * BENCH_CACHE_TTL_MS.
 */
import { Agent, request } from 'node:http';
import { availableParallelism } from 'node:os';
import { mkdtemp, rm } from 'node:fs/promises';
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { typicalReview } from '../../functions/admission/testing/typical.js';
import { ensureBinaries } from '../env/binaries.js';
import { startControlPlane, type ControlPlaneState } from '../env/control-plane.js';
import { installCrds, installDeckhouseCrds } from '../env/crds.js';
import { runKubectl } from '../env/kubectl.js';
import {
  codeCell,
  EMPTY_FUNCTION_BASELINE,
  interleaved,
  knobs,
  medianBy,
  nowMs,
  print,
  printComparison,
  processMemoryMb,
  recordResult,
  summarize,
  type Measurement,
  type Summary,
} from './lib.js';
import { runLoad, type LoadResult } from './load.js';
import { bundledArgs, cageFor, measureAlone, pinProcess, startServer, type Caged, type Running } from './processes.js';

const settings = knobs(
  z.object({
    BENCH_ROUNDS: env.int(3, 1).describe('Runs per variant and load shape, interleaved; the median run is reported'),
    BENCH_MAX_SECONDS: env.int(5, 1).describe('Measured seconds per run'),
    BENCH_CONCURRENCY: env.int(8, 1).describe('Keep-alive connections of the saturated runs'),
    BENCH_WARMUP: env.int(3_000, 0).describe('Unmeasured requests before each run'),
    BENCH_RATE: env.int(1_000, 1).describe('Reviews per second of the paced runs'),
    BENCH_CPU: env.int(1, 0).describe('The CPU core the function processes are pinned to (taskset)'),
    BENCH_CACHE_TTL_MS: env.int(1_000, 0).describe('LOOKUP_CACHE_TTL_MS of the apiserver-backed admission process'),
  }),
);

const VM_PATH = '/validate-virtualization-deckhouse-io-v1alpha2-virtualmachine';
const NS = 'bench';

interface Variant {
  readonly name: string;
  readonly server: Running;
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly body?: string;
}

/** Pin every thread of a started server to BENCH_CPU. */
async function pinned(server: Promise<Running>): Promise<Running> {
  const s = await server;
  await pinProcess(s.proc.child.pid, String(settings.BENCH_CPU));
  return s;
}

/** What the apiserver-backed lookups of the typical VM find: the namespace, the class, the CIDRs. */
async function prepareCluster(state: ControlPlaneState): Promise<void> {
  const kubectl = async (args: string[], stdin?: string): Promise<void> => {
    const res = await runKubectl(state, args, stdin === undefined ? {} : { stdin });
    if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${res.stderr}`);
  };
  await installCrds(state);
  await installDeckhouseCrds(state);
  await kubectl(['create', 'namespace', NS]);
  await kubectl(
    ['apply', '-f', '-'],
    `apiVersion: deckhouse.io/v1alpha1
kind: ModuleConfig
metadata: {name: virtualization}
spec: {enabled: true, version: 1, settings: {virtualMachineCIDRs: [10.66.0.0/16], dvcr: {storage: {type: PersistentVolumeClaim, persistentVolumeClaim: {size: 50Gi}}}}}
---
apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachineClass
metadata: {name: generic, annotations: {virtualmachineclass.virtualization.deckhouse.io/is-default-class: "true"}}
spec:
  cpu: {type: Model, model: Nehalem}
  sizingPolicies:
  - {cores: {min: 1, max: 4}, coreFractions: [5, 10, 20, 50, 100], memory: {min: 512Mi, max: 32Gi}}
  - {cores: {min: 5, max: 8}, coreFractions: [20, 50, 100]}
`,
  );
}

/** The typical VM must be admitted (this measures the allow path), with its lookups answered. */
async function checkAdmitted(v: Variant): Promise<void> {
  const res = await fetch(v.url, { method: 'POST', body: v.body, headers: { 'content-type': 'application/json' } });
  const review = (await res.json()) as { response?: { allowed?: boolean; status?: { message?: string }; warnings?: string[] } };
  if (review.response?.allowed !== true || (review.response.warnings ?? []).length > 0) {
    throw new Error(`${v.name} did not admit the typical VM cleanly: ${JSON.stringify(review.response)}`);
  }
}

interface Paced {
  readonly sent: number;
  readonly failed: number;
  readonly achievedRate: number;
  readonly latencyMs: Summary;
}

/** Open-loop load: request i goes out at start + i/rate whatever happened to the earlier ones. */
async function paced(v: Variant): Promise<Paced> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const total = settings.BENCH_RATE * settings.BENCH_MAX_SECONDS;
  const latencies: number[] = [];
  const pending: Array<Promise<void>> = [];
  let failed = 0;
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const sent = nowMs();
      const req = request(v.url, { method: v.method, agent, headers: v.body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => {
          latencies.push(nowMs() - sent);
          if ((res.statusCode ?? 0) >= 300) failed += 1;
          resolve();
        });
      });
      req.on('error', () => {
        failed += 1;
        resolve();
      });
      req.end(v.body);
    });
  try {
    const start = nowMs();
    let next = 0;
    await new Promise<void>((done) => {
      // Every timer tick (about 1 ms) sends what is due by then: cheap for this process, and the
      // schedule holds however slow the answers are.
      const tick = (): void => {
        const now = nowMs();
        for (; next < total && start + (next * 1000) / settings.BENCH_RATE <= now; next++) pending.push(one());
        if (next < total) setTimeout(tick, 1);
        else done();
      };
      tick();
    });
    const sendingMs = nowMs() - start;
    await Promise.all(pending);
    return { sent: total, failed, achievedRate: (total / sendingMs) * 1000, latencyMs: summarize(latencies) };
  } finally {
    agent.destroy();
  }
}

function saturatedRow(name: string, r: LoadResult): Measurement {
  return {
    name,
    values: { rps: r.requestsPerSecond, p50: r.latencyMs.p50, p99: r.latencyMs.p99 },
    note: r.failed > 0 ? `${r.failed} failed: ${JSON.stringify(r.statuses)}` : '',
  };
}

function pacedRow(name: string, r: Paced): Measurement {
  return {
    name,
    values: { rate: r.achievedRate, p50: r.latencyMs.p50, p99: r.latencyMs.p99, max: r.latencyMs.max },
    note: r.failed > 0 ? `${r.failed} failed` : '',
  };
}

async function measure(variants: readonly Variant[]): Promise<{ saturated: Measurement[]; paced: Measurement[] }> {
  const load = { concurrency: settings.BENCH_CONCURRENCY, requests: 1e9, maxMs: settings.BENCH_MAX_SECONDS * 1000, warmup: settings.BENCH_WARMUP };
  const servers = variants.map((v) => v.server);
  const alone = (v: Variant): Promise<void> => measureAlone(v.server, servers, settings.BENCH_CPU);
  for (const v of variants) {
    await alone(v);
    await runLoad({ ...load, url: v.url, method: v.method, body: v.body, headers: { 'content-type': 'application/json' }, maxMs: 2_000 });
  }
  const sat = await interleaved(variants, settings.BENCH_ROUNDS, async (v) => {
    await alone(v);
    return runLoad({ ...load, url: v.url, method: v.method, body: v.body, headers: { 'content-type': 'application/json' } });
  });
  const pac = await interleaved(variants, settings.BENCH_ROUNDS, async (v) => {
    await alone(v);
    return paced(v);
  });
  return {
    saturated: variants.map((v, i) =>
      saturatedRow(
        v.name,
        medianBy(sat[i] ?? [], (r) => r.requestsPerSecond),
      ),
    ),
    paced: variants.map((v, i) =>
      pacedRow(
        v.name,
        medianBy(pac[i] ?? [], (r) => r.latencyMs.p99),
      ),
    ),
  };
}

function verdict(saturated: readonly Measurement[], pacedRows: readonly Measurement[]): void {
  for (const name of [MEMORY, APISERVER]) {
    const rps = saturated.find((r) => r.name === name)?.values['rps'] ?? Number.NaN;
    const p99 = pacedRows.find((r) => r.name === name)?.values['p99'] ?? Number.NaN;
    print(
      `${name}: p99 ${p99.toFixed(2)} ms at ${settings.BENCH_RATE}/s (target < 5) ${p99 < 5 ? 'MET' : 'MISSED'}; ` +
        `saturated ${rps.toFixed(0)} reviews/s (target > 3000) ${rps > 3000 ? 'MET' : 'MISSED'}`,
    );
  }
}

/** The cells of this run's row in tests/bench/RESULTS.md (section admission), after the date. */
function resultCells(
  saturated: readonly Measurement[],
  pacedRows: readonly Measurement[],
  memoryRows: ReadonlyArray<{ name: string; values: { idle: number; peak: number } }>,
): string[] {
  const paced = (name: string): Measurement['values'] => pacedRows.find((r) => r.name === name)?.values ?? {};
  const rps = (name: string): string => (saturated.find((r) => r.name === name)?.values['rps'] ?? NaN).toLocaleString('en-US', { maximumFractionDigits: 0 });
  const ms = (v: number | undefined): string => (v ?? NaN).toFixed(2);
  const shipped = memoryRows.find((m) => m.name === APISERVER)?.values ?? { idle: NaN, peak: NaN };
  return [
    codeCell(),
    `${ms(paced(APISERVER)['p99'])} ms (p50 ${(paced(APISERVER)['p50'] ?? NaN).toFixed(3)}) / ${ms(paced(MEMORY)['p99'])} ms (p50 ${(paced(MEMORY)['p50'] ?? NaN).toFixed(3)}); empty function p99 ${ms(paced(EMPTY_FUNCTION_BASELINE)['p99'])} ms`,
    `${rps(APISERVER)} / ${rps(MEMORY)}`,
    `${shipped.idle.toFixed(1)} / ${shipped.peak.toFixed(1)} MB`,
  ];
}

const MEMORY = 'admission, in-memory lookups';
const APISERVER = 'admission, apiserver lookups (cached)';

async function main(): Promise<void> {
  const workDir = await mkdtemp('/tmp/admission-bench-');
  const cp = await startControlPlane(await ensureBinaries(), workDir);
  const running: Running[] = [];
  try {
    await prepareCluster(cp.state);
    // Bundled with their packages, as the image runs functions (Dockerfile, shared/bundle).
    const [admissionArgs, memoryArgs, emptyArgs] = [
      await bundledArgs('functions/admission/index.ts', 'bundled'),
      await bundledArgs('functions/admission/testing/bench-entry.ts', 'bundled'),
      await bundledArgs('functions/sample-echo/index.ts', 'bundled'),
    ];
    // Each server in a memory cgroup of its own, limited as the admission Service limits its container.
    const caged = (name: string): Caged => cageFor('knative/functions/admission.yaml', `admission-${name}`);
    const apiserverCage = caged('apiserver');
    const empty = await pinned(startServer(emptyArgs, {}, caged('empty').cage));
    running.push(empty);
    const memory = await pinned(startServer(memoryArgs, {}, caged('memory').cage));
    running.push(memory);
    const apiserver = await pinned(
      startServer(admissionArgs, { KUBECONFIG: cp.state.kubeconfigPath, LOOKUP_CACHE_TTL_MS: String(settings.BENCH_CACHE_TTL_MS) }, apiserverCage.cage),
    );
    running.push(apiserver);
    const body = typicalReview(NS);
    const variants: Variant[] = [
      { name: EMPTY_FUNCTION_BASELINE, server: empty, url: `${empty.url}/empty`, method: 'GET' },
      { name: MEMORY, server: memory, url: `${memory.url}${VM_PATH}`, method: 'POST', body },
      { name: APISERVER, server: apiserver, url: `${apiserver.url}${VM_PATH}`, method: 'POST', body },
    ];
    for (const v of variants.slice(1)) await checkAdmitted(v);
    print(
      `admission benchmark: node ${process.version}, functions pinned to CPU ${settings.BENCH_CPU} of ${availableParallelism()}, ` +
        `review body ${body.length} bytes, cache TTL ${settings.BENCH_CACHE_TTL_MS} ms, each ${apiserverCage.note}`,
    );

    const processes: ReadonlyArray<readonly [string, Running]> = [
      [EMPTY_FUNCTION_BASELINE, empty],
      [MEMORY, memory],
      [APISERVER, apiserver],
    ];
    const idle = processes.map(([, r]) => processMemoryMb(r.proc.child.pid ?? 0).rss);
    const { saturated, paced: pacedRows } = await measure(variants);
    const memoryRows = processes.map(([name, r], i) => ({ name, values: { idle: idle[i] ?? NaN, peak: processMemoryMb(r.proc.child.pid ?? 0).peak } }));
    printComparison(
      `Saturated: ${settings.BENCH_CONCURRENCY} keep-alive connections (median-req/s run of ${settings.BENCH_ROUNDS})`,
      [
        { key: 'rps', label: 'reviews/s', digits: 0, ratio: true },
        { key: 'p50', label: 'p50 ms', digits: 3, ratio: true },
        { key: 'p99', label: 'p99 ms', digits: 3, ratio: true },
      ],
      saturated,
      EMPTY_FUNCTION_BASELINE,
    );
    printComparison(
      `Paced: ${settings.BENCH_RATE} requests/s open-loop for ${settings.BENCH_MAX_SECONDS} s (median-p99 run of ${settings.BENCH_ROUNDS})`,
      [
        { key: 'rate', label: 'sent/s', digits: 0 },
        { key: 'p50', label: 'p50 ms', digits: 3, ratio: true },
        { key: 'p99', label: 'p99 ms', digits: 3, ratio: true },
        { key: 'max', label: 'max ms', digits: 2 },
      ],
      pacedRows,
      EMPTY_FUNCTION_BASELINE,
    );
    verdict(saturated, pacedRows);
    printComparison(
      'Resident memory (MB): idle with caches warm, peak (VmHWM) after the load',
      [
        { key: 'idle', label: 'idle', digits: 1, ratio: true },
        { key: 'peak', label: 'peak', digits: 1, ratio: true },
      ],
      memoryRows,
      EMPTY_FUNCTION_BASELINE,
    );
    const base = memoryRows[0]?.values ?? { idle: NaN, peak: NaN };
    for (const m of memoryRows.slice(1)) {
      const ok = m.values.idle <= base.idle + 10 && m.values.peak <= base.peak + 20;
      print(
        `${m.name}: RSS idle ${m.values.idle.toFixed(1)} MB (target <= ${(base.idle + 10).toFixed(1)}), peak ${m.values.peak.toFixed(1)} MB (target <= ${(base.peak + 20).toFixed(1)}) ${ok ? 'MET' : 'MISSED'}`,
      );
    }
    recordResult('admission', resultCells(saturated, pacedRows, memoryRows));
  } finally {
    for (const r of running) await r.stop();
    await cp.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
