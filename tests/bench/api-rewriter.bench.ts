/**
 * kube-api-rewriter benchmark: the proxy (bundled as the image runs it, shipped defaults) in front of the real
 * kube-apiserver of tests/env, against talking to that apiserver directly, in the same run:
 *
 * 1. GET of one VirtualMachine: latency p50/p99 (target: proxy p50 < 1.3x direct).
 * 2. LIST of BENCH_LIST_OBJECTS (1,000) VirtualMachines: latency p50/p99.
 * 3. Watch delivery: BENCH_WATCH_EVENTS (10,000) changes written directly; one watch through the proxy
 *    and one direct, both open at once; per event the time from its write to its arrival on each
 *    (target: proxy p50 within 2 ms of direct), and the proxy's added delay per event.
 * 4. CPU (user+system seconds) and RSS of the proxy process next to the apiserver's over the same
 *    phases (target: RSS < 80 MB).
 *
 * Both clients are node http(s) keep-alive agents in this process (direct: HTTPS with the admin's client
 * certificate; proxy: HTTP on loopback, as the sidecar is used). Requests alternate between the two in
 * blocks so load drift spreads over both.
 *
 * Knobs: BENCH_GETS, BENCH_LISTS, BENCH_LIST_OBJECTS, BENCH_WATCH_EVENTS, BENCH_WRITERS, BENCH_PROXY_CPU_PROF
 * (a folder for the proxy's `node --cpu-prof` profile, written when the proxy exits at the end),
 * BENCH_PROXY_NODE_ARGS (node flags for the proxy, to try heap limits; the output then says it is not
 * the shipped configuration).
 *
 * Each run adds a dated row to tests/bench/RESULTS.md (section api-rewriter; BENCH_RESULTS=false: not).
 */
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { startNodeProcess } from '../../shared/runtime/testing/index.js';
import { upstreamFromKubeConfig, type UpstreamTarget } from '../../daemons/api-rewriter/upstream.js';
import { ensureBinaries } from '../env/binaries.js';
import { startControlPlane } from '../env/control-plane.js';
import { installCrds } from '../env/crds.js';
import { freePort, newKubeConfig } from '../env/index.js';
import { codeCell, nowMs, print, printComparison, processCpuSeconds, processMemoryMb, recordResult, summarize, type Measurement } from './lib.js';
import { bundledArgs, cageFor } from './processes.js';

const settings = z
  .object({
    BENCH_GETS: env.int(3_000, 10).describe('GETs of one object per side'),
    BENCH_LISTS: env.int(40, 2).describe('LISTs per side'),
    BENCH_LIST_OBJECTS: env.int(1_000, 1).describe('Objects in the listed namespace'),
    BENCH_WATCH_EVENTS: env.int(10_000, 10).describe('Changes written while both watches are open'),
    BENCH_WRITERS: env.int(8, 1).describe('Writes in flight while generating watch events'),
    BENCH_PROXY_CPU_PROF: env.string('').describe('A folder: run the proxy with node --cpu-prof and write its CPU profile there on exit'),
    BENCH_PROXY_NODE_ARGS: env
      .string('')
      .describe('Extra node flags for the proxy process (space-separated), e.g. V8 heap limits; the rows then do not show the shipped configuration'),
  })
  .parse(process.env);

const INT = 'internal.virtualization.deckhouse.io';
const NS = 'bench-rewriter';
const DIRECT_BASE = `/apis/${INT}/v1/namespaces/${NS}/internalvirtualizationvirtualmachines`;
const PROXY_BASE = `/apis/kubevirt.io/v1/namespaces/${NS}/virtualmachines`;

interface Response {
  status: number;
  body: Buffer;
}

type Send = (method: string, path: string, body?: unknown, contentType?: string) => Promise<Response>;

function sender(request: (o: http.RequestOptions) => http.ClientRequest, headers: () => Promise<http.OutgoingHttpHeaders>): Send {
  return async (method, path, body, contentType = 'application/json') => {
    const h: http.OutgoingHttpHeaders = { ...(await headers()), accept: 'application/json' };
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    if (payload !== undefined) {
      h['content-type'] = contentType;
      h['content-length'] = payload.length;
    }
    return new Promise((resolve, reject) => {
      const req = request({ method, path, headers: h });
      req.on('error', reject);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.end(payload);
    });
  };
}

function vm(i: number): unknown {
  return {
    apiVersion: `${INT}/v1`,
    kind: 'InternalVirtualizationVirtualMachine',
    metadata: {
      name: `vm-${i}`,
      namespace: NS,
      labels: { [`kubevirt.${INT}/vm`]: `vm-${i}`, 'vm.internal.virtualization.deckhouse.io/name': `vm-${i}`, app: 'bench' },
      annotations: { [`kubevirt.${INT}/latest-observed-api-version`]: 'v1', [`kubevirt.${INT}/storage-observed-api-version`]: 'v1' },
      finalizers: [`kubevirt.${INT}/virtualMachineControllerFinalize`],
    },
    spec: {
      runStrategy: 'Always',
      template: {
        metadata: { labels: { [`kubevirt.${INT}/domain`]: `vm-${i}` } },
        spec: {
          domain: {
            cpu: { cores: 2, sockets: 1 },
            memory: { guest: '2Gi' },
            devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }], interfaces: [{ name: 'default', bridge: {} }] },
          },
          networks: [{ name: 'default', pod: {} }],
          volumes: [{ name: 'root', persistentVolumeClaim: { claimName: `vd-${i}` } }],
        },
      },
    },
  };
}

/** Stop the proxy: gracefully when profiling, so node writes the CPU profile (SIGKILL would lose it). */
async function stopProxy(proc: ReturnType<typeof startNodeProcess> | undefined): Promise<void> {
  if (proc !== undefined && settings.BENCH_PROXY_CPU_PROF !== '') {
    proc.child.kill('SIGTERM');
    await Promise.race([proc.exited, new Promise((r) => setTimeout(r, 10_000))]);
    print(`[api-rewriter] proxy CPU profile in ${settings.BENCH_PROXY_CPU_PROF} (open in Chrome DevTools)`);
  }
  proc?.kill();
  await proc?.exited;
}

/** The proxy's own view of its memory (MB), from its /metrics: V8 heap used/total and external (Buffers). */
async function proxyHeap(healthPort: number): Promise<Record<string, number>> {
  const text = await fetch(`http://127.0.0.1:${healthPort}/metrics`).then(
    (r) => r.text(),
    () => '',
  );
  const mb = (name: string): number => Number(new RegExp(`^${name} ([0-9.e+]+)`, 'm').exec(text)?.[1] ?? NaN) / 1e6;
  return { heapUsed: mb('nodejs_heap_size_used_bytes'), heapTotal: mb('nodejs_heap_size_total_bytes'), external: mb('nodejs_external_memory_bytes') };
}

/** utime+stime seconds and RSS/peak RSS MB of a process, from /proc. */
function procStats(pid: number): { cpu: number; rssMb: number; hwmMb: number } {
  const { rss, peak } = processMemoryMb(pid);
  return { cpu: processCpuSeconds(pid), rssMb: rss, hwmMb: peak };
}

async function inParallel(n: number, limit: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, n) }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

/** Alternate blocks of requests between the two sides; latencies in ms per side. */
async function alternate(total: number, block: number, sides: readonly (() => Promise<void>)[]): Promise<number[][]> {
  const out = sides.map(() => [] as number[]);
  for (let done = 0; done < total; done += block) {
    for (const [s, run] of sides.entries()) {
      for (let i = 0; i < Math.min(block, total - done); i++) {
        const t = nowMs();
        await run();
        out[s]?.push(nowMs() - t);
      }
    }
  }
  return out;
}

interface WatchLog {
  /** resourceVersion → arrival (ms). */
  readonly arrivals: Map<string, number>;
  close(): void;
}

function openWatch(request: (o: http.RequestOptions) => http.ClientRequest, headers: http.OutgoingHttpHeaders, path: string): Promise<WatchLog> {
  const arrivals = new Map<string, number>();
  return new Promise((resolve, reject) => {
    const req = request({ method: 'GET', path, headers: { ...headers, accept: 'application/json' } });
    req.on('error', reject);
    req.on('response', (res) => {
      if (res.statusCode !== 200) reject(new Error(`watch ${path}: ${res.statusCode}`));
      let pending = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        const at = nowMs();
        pending += chunk;
        let nl = pending.indexOf('\n');
        while (nl !== -1) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          const rv = /"resourceVersion":"(\d+)"/.exec(line)?.[1];
          if (rv !== undefined && !arrivals.has(rv)) arrivals.set(rv, at);
          nl = pending.indexOf('\n');
        }
      });
      resolve({ arrivals, close: () => req.destroy() });
    });
    req.end();
  });
}

/** The run's row in tests/bench/RESULTS.md: p50 ratios through the proxy to direct, the watch's added delay, the proxy's memory. */
function record(run: {
  getDirect: number[];
  getProxy: number[];
  listDirect: number[];
  listProxy: number[];
  addedP50: number;
  peakMb: number;
  idle: Readonly<Record<string, number>>;
}): void {
  const p50Ratio = (direct: number[], proxy: number[]): string => `${(summarize(proxy).p50 / summarize(direct).p50).toFixed(2)}x`;
  recordResult('api-rewriter', [
    codeCell(),
    p50Ratio(run.getDirect, run.getProxy),
    p50Ratio(run.listDirect, run.listProxy),
    `${run.addedP50.toFixed(2)} ms`,
    `${run.peakMb.toFixed(0)} MB; idle ${(run.idle['proxyRss'] ?? NaN).toFixed(0)} MB`,
  ]);
}

async function main(): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), 'bench-api-rewriter-'));
  const cp = await startControlPlane(await ensureBinaries(), workDir);
  let direct: UpstreamTarget | undefined;
  let proxyProc: ReturnType<typeof startNodeProcess> | undefined;
  // The rewriter's container in the install (the virt-operator Pod's first one) is limited; so is the proxy here.
  const caged = cageFor('knative/kubevirt/virt-operator.yaml', 'api-rewriter');
  const proxyAgent = new http.Agent({ keepAlive: true });
  try {
    await installCrds(cp.state);
    direct = await upstreamFromKubeConfig(newKubeConfig(cp.state.kubeconfigPath));
    const d = direct;
    const viaDirect = sender(
      (o) => d.request(o),
      () => Promise.resolve(d.authHeaders()),
    );
    await viaDirect('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    print(`[api-rewriter] creating ${settings.BENCH_LIST_OBJECTS} VirtualMachines (stored renamed)`);
    await inParallel(settings.BENCH_LIST_OBJECTS, 8, async (i) => {
      const r = await viaDirect('POST', DIRECT_BASE, vm(i));
      if (r.status !== 201) throw new Error(`create vm-${i}: ${r.status} ${r.body.toString()}`);
    });

    const [proxyPort, healthPort] = [await freePort(), await freePort()];
    const profile = settings.BENCH_PROXY_CPU_PROF === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${settings.BENCH_PROXY_CPU_PROF}`];
    const extra = settings.BENCH_PROXY_NODE_ARGS.split(' ').filter((a) => a !== '');
    if (extra.length > 0) print(`[api-rewriter] NOT the shipped configuration: the proxy runs with ${extra.join(' ')}`);
    print(`[api-rewriter] the proxy runs ${caged.note}`);
    proxyProc = startNodeProcess([...profile, ...extra, ...(await bundledArgs('daemons/api-rewriter/main.ts', 'bundled'))], {
      ...caged.start,
      // METRICS_AUTH=none: the bench reads the proxy's heap figures from /metrics (loopback only).
      env: {
        KUBECONFIG: cp.state.kubeconfigPath,
        PROXY_PORT: String(proxyPort),
        HEALTH_PORT: String(healthPort),
        HEALTH_HOST: '127.0.0.1',
        METRICS_AUTH: 'none',
      },
    });
    for (let i = 0; ; i++) {
      const ok = await fetch(`http://127.0.0.1:${healthPort}/health/readiness`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (i > 600) throw new Error('the proxy never became ready');
      await new Promise((r) => setTimeout(r, 100));
    }
    const proxyPid = proxyProc.child.pid ?? 0;
    const apiPid = cp.state.pids['apiserver'] ?? 0;
    const proxyRequest = (o: http.RequestOptions): http.ClientRequest => http.request({ host: '127.0.0.1', port: proxyPort, agent: proxyAgent, ...o });
    const viaProxy = sender(proxyRequest, () => Promise.resolve({}));
    const check = async (send: Send, path: string, kind: string): Promise<void> => {
      const r = await send('GET', path);
      if (r.status !== 200 || !r.body.includes(`"kind":"${kind}"`)) throw new Error(`GET ${path}: ${r.status} ${r.body.subarray(0, 200).toString()}`);
    };
    await check(viaProxy, `${PROXY_BASE}/vm-0`, 'VirtualMachine');
    await check(viaDirect, `${DIRECT_BASE}/vm-0`, 'InternalVirtualizationVirtualMachine');

    const cpuRows: Measurement[] = [];
    const phase = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
      const [p0, a0] = [procStats(proxyPid), procStats(apiPid)];
      const value = await work();
      const [p1, a1] = [procStats(proxyPid), procStats(apiPid)];
      cpuRows.push({
        name,
        values: { proxyCpu: p1.cpu - p0.cpu, apiCpu: a1.cpu - a0.cpu, proxyRss: p1.rssMb, apiRss: a1.rssMb, ...(await proxyHeap(healthPort)) },
      });
      return value;
    };
    const idle: Measurement = { name: 'idle', values: { proxyRss: procStats(proxyPid).rssMb, ...(await proxyHeap(healthPort)) } };

    // 1. GET one object. A warm-up first (JIT, connections).
    await alternate(200, 50, [
      () => check(viaDirect, `${DIRECT_BASE}/vm-1`, 'InternalVirtualizationVirtualMachine'),
      () => check(viaProxy, `${PROXY_BASE}/vm-1`, 'VirtualMachine'),
    ]);
    const [getDirect = [], getProxy = []] = await phase('GET', () =>
      alternate(settings.BENCH_GETS, 100, [
        () => check(viaDirect, `${DIRECT_BASE}/vm-1`, 'InternalVirtualizationVirtualMachine'),
        () => check(viaProxy, `${PROXY_BASE}/vm-1`, 'VirtualMachine'),
      ]),
    );
    // 2. LIST every object of the namespace.
    const [listDirect = [], listProxy = []] = await phase('LIST', () =>
      alternate(settings.BENCH_LISTS, 5, [
        () => check(viaDirect, DIRECT_BASE, 'InternalVirtualizationVirtualMachineList'),
        () => check(viaProxy, PROXY_BASE, 'VirtualMachineList'),
      ]),
    );
    const latency = (name: string, values: number[], note: string): Measurement => {
      const s = summarize(values);
      return { name, values: { p50: s.p50, p99: s.p99, mean: s.mean }, note };
    };
    const latencyColumns = [
      { key: 'p50', label: 'p50 ms', digits: 2, ratio: true },
      { key: 'p99', label: 'p99 ms', digits: 2, ratio: true },
      { key: 'mean', label: 'mean ms', digits: 2 },
    ];
    printComparison(
      `GET one VirtualMachine (${settings.BENCH_GETS} each)`,
      latencyColumns,
      [latency('direct', getDirect, 'HTTPS, client certificate'), latency('through the proxy', getProxy, 'target p50 < 1.3x')],
      'direct',
    );
    printComparison(
      `LIST ${settings.BENCH_LIST_OBJECTS} VirtualMachines (${settings.BENCH_LISTS} each)`,
      latencyColumns,
      [latency('direct', listDirect, ''), latency('through the proxy', listProxy, 'every object restored')],
      'direct',
    );

    // 3. Watch delivery.
    const rv = (JSON.parse((await viaDirect('GET', `${DIRECT_BASE}?limit=1`)).body.toString()) as { metadata: { resourceVersion: string } }).metadata
      .resourceVersion;
    const directWatch = await openWatch((o) => d.request(o), d.authHeaders(), `${DIRECT_BASE}?watch=true&resourceVersion=${rv}`);
    const proxyWatch = await openWatch(proxyRequest, {}, `${PROXY_BASE}?watch=true&resourceVersion=${rv}`);
    const written = new Map<string, number>();
    const n = settings.BENCH_WATCH_EVENTS;
    const objects = settings.BENCH_LIST_OBJECTS;
    await phase('watch', async () => {
      await inParallel(n, settings.BENCH_WRITERS, async (i) => {
        const t = nowMs();
        const r = await viaDirect(
          'PATCH',
          `${DIRECT_BASE}/vm-${i % objects}`,
          { metadata: { annotations: { 'bench/seq': String(i) } } },
          'application/merge-patch+json',
        );
        if (r.status !== 200) throw new Error(`patch: ${r.status} ${r.body.toString()}`);
        const version = /"resourceVersion":"(\d+)"/.exec(r.body.toString())?.[1];
        if (version !== undefined) written.set(version, t);
      });
      const deadline = nowMs() + 120_000;
      while ((directWatch.arrivals.size < n || proxyWatch.arrivals.size < n) && nowMs() < deadline) await new Promise((r) => setTimeout(r, 20));
    });
    directWatch.close();
    proxyWatch.close();
    const delayDirect: number[] = [];
    const delayProxy: number[] = [];
    const added: number[] = [];
    for (const [version, t] of written) {
      const a = directWatch.arrivals.get(version);
      const b = proxyWatch.arrivals.get(version);
      if (a === undefined || b === undefined) continue;
      delayDirect.push(a - t);
      delayProxy.push(b - t);
      added.push(b - a);
    }
    const addedS = summarize(added);
    printComparison(
      `watch: ${n} changes, write to arrival (${delayProxy.length} events seen on both)`,
      latencyColumns,
      [
        latency('direct', delayDirect, ''),
        latency('through the proxy', delayProxy, `added per event: p50 ${addedS.p50.toFixed(2)} ms, p99 ${addedS.p99.toFixed(2)} ms (target p50 within 2 ms)`),
      ],
      'direct',
    );
    if (delayProxy.length < n) print(`  note: only ${delayProxy.length} of ${n} events arrived on both watches`);

    // 4. CPU and RSS.
    const final = procStats(proxyPid);
    const rows: Measurement[] = cpuRows.map((r) => ({ name: r.name, values: r.values }));
    print(`\n== CPU seconds and RSS during each phase: the proxy next to the apiserver ==`);
    for (const r of rows) {
      const v = r.values;
      const proxyCpu = v['proxyCpu'] ?? NaN;
      const apiCpu = v['apiCpu'] ?? NaN;
      print(
        `${r.name.padEnd(6)} proxy CPU ${proxyCpu.toFixed(2)} s, apiserver CPU ${apiCpu.toFixed(2)} s (${(proxyCpu / apiCpu).toFixed(2)}x); ` +
          `RSS proxy ${(v['proxyRss'] ?? NaN).toFixed(0)} MB, apiserver ${(v['apiRss'] ?? NaN).toFixed(0)} MB (${((v['proxyRss'] ?? NaN) / (v['apiRss'] ?? NaN)).toFixed(2)}x)`,
      );
    }
    print(`proxy peak RSS ${final.hwmMb.toFixed(0)} MB (target < 80 MB)`);
    print(`proxy's ${caged.usage()}`);
    print(
      'proxy memory by its own count (/metrics), after each phase: RSS = V8 heap (total, of it used) + external (Buffers) + the rest (code, stacks, malloc)',
    );
    for (const r of [idle, ...rows]) {
      const v = r.values;
      const f = (k: string): string => (v[k] ?? NaN).toFixed(0);
      print(`${r.name.padEnd(6)} RSS ${f('proxyRss')} MB: heap ${f('heapTotal')} MB (used ${f('heapUsed')} MB), external ${f('external')} MB`);
    }
    record({ getDirect, getProxy, listDirect, listProxy, addedP50: addedS.p50, peakMb: final.hwmMb, idle: idle.values });
  } finally {
    proxyAgent.destroy();
    direct?.close();
    await stopProxy(proxyProc);
    caged.remove();
    await cp.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
