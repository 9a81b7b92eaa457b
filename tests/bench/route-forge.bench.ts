/**
 * route-forge benchmark, in a network namespace made here (no packet leaves it):
 *
 * 1. Converge BENCH_ROUTES VM routes from an empty table: route-forge's sync (read the kernel with
 *    lookups of every node, compute the desired state from the VMs as the informers hold them, diff,
 *    write one batch: daemons/route-forge/syncer.ts on the real iproute2 port), as a ratio to
 *    `ip -batch` adding the same routes in the same namespace (the baseline, 1.00x). Target: < 2x.
 * 2. Drift repair latency with that many routes in place: a route deleted by hand, until it is back,
 *    both instants taken from an `ip monitor route` of this process. Target: p99 < 1 s.
 *
 * The apiserver is not part of either figure (the informers' list of 10,000 VMs is the controller
 * benchmark's business); BENCH_E2E=true adds, for information, the whole daemon process started
 * against a control plane holding the VMs, until its table is complete.
 *
 * Each run adds a dated row to tests/bench/RESULTS.md (section route-forge; BENCH_RESULTS=false: not).
 *
 * Knobs: BENCH_ROUTES, BENCH_NODES, BENCH_ROUNDS, BENCH_REPAIRS, BENCH_E2E.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { rootLogger } from '../../shared/log/index.js';
import { IpRoute2 } from '../../daemons/route-forge/iproute2.js';
import { RouteForgeMetrics } from '../../daemons/route-forge/metrics.js';
import type { VmAddress } from '../../daemons/route-forge/model.js';
import { Syncer } from '../../daemons/route-forge/syncer.js';
import { formatIPv4, parseIPv4 } from '../../shared/api/ipv4.js';
import { createNetns, setUpNode, type TestNetns } from '../../shared/testing/netns.js';
import { codeCell, interleaved, knobs, medianBy, nowMs, print, printComparison, recordResult, summarize, type Measurement } from './lib.js';
import { runEndToEnd } from './route-forge-e2e.js';

const settings = knobs(
  z.object({
    BENCH_ROUTES: env.int(10_000, 1).describe('VM routes to converge'),
    BENCH_NODES: env.int(10, 2).describe('Nodes the VMs are spread over (one is this node)'),
    BENCH_ROUNDS: env.int(5, 1).describe('Runs per row, interleaved; the median run is reported'),
    BENCH_REPAIRS: env.int(200, 1).describe('Routes deleted by hand, one at a time, for the repair latency'),
    BENCH_E2E: env.bool(true).describe('Also time the daemon process against a control plane holding the VMs, and its memory under drift'),
    BENCH_E2E_REPAIRS: env.int(1_000, 1).describe('Routes deleted by hand in the daemon process after convergence (BENCH_E2E), for its RSS'),
  }),
);

const TABLE = 1490;
const CIDR = '10.166.0.0/16';
const LOCAL_IP = '10.0.0.1';

/** Node i: 0 is this node (cilium_host), the others on the link 10.200.0.0/24. */
const nodeIP = (i: number): string => (i === 0 ? LOCAL_IP : `10.200.0.${i + 1}`);
const vmIP = (i: number): string => formatIPv4((parseIPv4('10.166.0.0') ?? 0) + 1 + i);

function world(): { vms: VmAddress[]; nodes: Map<string, string> } {
  const nodes = new Map(Array.from({ length: settings.BENCH_NODES }, (_, i) => [`node-${i}`, nodeIP(i)] as const));
  const vms = Array.from({ length: settings.BENCH_ROUTES }, (_, i) => ({
    key: `ns/vm-${i}`,
    ip: vmIP(i),
    node: `node-${i % settings.BENCH_NODES}`,
    deleting: false,
  }));
  return { vms, nodes };
}

/** The baseline's batch: the routes route-forge converges to, as plain `ip route replace` lines. */
function baselineLines(vms: readonly VmAddress[], nodes: ReadonlyMap<string, string>): string {
  return (
    vms
      .map((vm) => {
        const via = nodes.get(vm.node ?? '') ?? '';
        return via === LOCAL_IP
          ? `route replace ${vm.ip ?? ''}/32 dev cilium_host src ${LOCAL_IP} table ${TABLE}`
          : `route replace ${vm.ip ?? ''}/32 via ${via} dev veth0 src 10.200.0.1 table ${TABLE}`;
      })
      .join('\n') + '\n'
  );
}

const quiet = rootLogger.child({ component: 'bench' });
quiet.level = 'silent';

function newSyncer(ns: TestNetns, vms: readonly VmAddress[], nodes: ReadonlyMap<string, string>): Syncer {
  return new Syncer({
    kernel: new IpRoute2({ netns: ns.name }),
    table: TABLE,
    localDevice: 'cilium_host',
    dryRun: false,
    inputs: () => ({ vms, nodes, cidrs: [CIDR] }),
    metrics: new RouteForgeMetrics(),
    log: quiet,
  });
}

async function emptyTable(ns: TestNetns): Promise<void> {
  await ns.ip(['route', 'flush', 'table', String(TABLE)]).catch(() => undefined);
  await ns.ip(['rule', 'del', 'priority', String(TABLE)]).catch(() => undefined);
}

async function convergeRows(ns: TestNetns): Promise<Measurement[]> {
  const { vms, nodes } = world();
  const batch = baselineLines(vms, nodes);
  const variants = ['ip -batch', 'route-forge sync'] as const;
  const results = await interleaved(variants, settings.BENCH_ROUNDS, async (variant) => {
    await emptyTable(ns);
    const start = nowMs();
    if (variant === 'ip -batch') {
      await ns.ip(['-batch', '-'], batch);
    } else {
      const result = await newSyncer(ns, vms, nodes).syncOnce();
      if (result.failed > 0) throw new Error(`${result.failed} changes refused`);
    }
    const ms = nowMs() - start;
    const count = (await ns.table(TABLE)).length;
    const expected = settings.BENCH_ROUTES + (variant === 'ip -batch' ? 0 : 1);
    if (count !== expected) throw new Error(`${variant}: ${count} routes in the table, expected ${expected}`);
    return ms;
  });
  return variants.map((name, i) => {
    const runs = results[i] ?? [];
    const ms = medianBy(runs, (v) => v);
    return {
      name,
      values: { ms, routesPerS: (settings.BENCH_ROUTES / ms) * 1000 },
      note: `median of ${runs.length}: ${runs.map((v) => v.toFixed(0)).join(', ')} ms`,
    };
  });
}

/** Lines of `ip monitor route` in this process, each with the instant it arrived. */
function monitor(ns: TestNetns): { next(match: (line: string) => boolean): Promise<number>; stop(): void } {
  const child = spawn('ip', ['-n', ns.name, 'monitor', 'route'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const waiters: Array<{ match: (line: string) => boolean; resolve: (t: number) => void }> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const t = nowMs();
    const at = waiters.findIndex((w) => w.match(line));
    if (at !== -1) waiters.splice(at, 1)[0]?.resolve(t);
  });
  return {
    next: (match) => new Promise((resolve) => waiters.push({ match, resolve })),
    stop: () => child.kill('SIGTERM'),
  };
}

async function repairLatencies(ns: TestNetns): Promise<number[]> {
  const { vms, nodes } = world();
  await emptyTable(ns);
  const syncer = newSyncer(ns, vms, nodes);
  const kernel = new IpRoute2({ netns: ns.name });
  const stop = new AbortController();
  // The daemon's wiring (daemon.ts watchKernel): table changes trigger a sync, others a lookup check.
  await kernel.watch(
    TABLE,
    (event) => {
      if (event.kind === 'table') syncer.tableChanged(event.route);
      else if (event.kind === 'other') syncer.trigger('routing');
      else if (event.kind === 'link-down' && syncer.usesDevice(event.device)) syncer.trigger('link');
    },
    stop.signal,
  );
  const running = syncer.run(stop.signal);
  syncer.trigger('start');
  while ((await ns.table(TABLE)).length < settings.BENCH_ROUTES + 1) await new Promise((resolve) => setTimeout(resolve, 100));
  const watch = monitor(ns);
  await new Promise((resolve) => setTimeout(resolve, 200)); // the bench's own monitor subscribes
  const latencies: number[] = [];
  try {
    for (let k = 0; k < settings.BENCH_REPAIRS; k++) {
      const ip = vmIP(Math.floor((k * 7919) % settings.BENCH_ROUTES));
      const words = (line: string): string[] => line.trim().split(/\s+/);
      const deleted = watch.next((line) => line.startsWith('Deleted ') && words(line)[1] === ip);
      const restored = watch.next((line) => !line.startsWith('Deleted ') && words(line)[0] === ip);
      await ns.ip(['route', 'del', `${ip}/32`, 'table', String(TABLE)]);
      const [t0, t1] = await Promise.all([deleted, restored]);
      latencies.push(t1 - t0);
    }
  } finally {
    watch.stop();
    stop.abort();
    await running;
  }
  return latencies;
}

async function main(): Promise<void> {
  const ns = await createNetns('rfbench');
  try {
    await setUpNode(ns, LOCAL_IP);
    print(`route-forge: ${settings.BENCH_ROUTES} VM routes over ${settings.BENCH_NODES} nodes, ${settings.BENCH_ROUNDS} rounds, namespace ${ns.name}`);
    const rows = await convergeRows(ns);
    printComparison(
      `converge ${settings.BENCH_ROUTES} routes from an empty table (target < 2x)`,
      [
        { key: 'ms', label: 'ms', ratio: true },
        { key: 'routesPerS', label: 'routes/s', digits: 0 },
      ],
      rows,
      'ip -batch',
    );
    const repairs = summarize(await repairLatencies(ns));
    print(
      `\n== drift repair with ${settings.BENCH_ROUTES} routes in place: route deleted -> restored (target p99 < 1000 ms) ==\n` +
        `n ${repairs.n}  p50 ${repairs.p50.toFixed(1)} ms  p90 ${repairs.p90.toFixed(1)} ms  p99 ${repairs.p99.toFixed(1)} ms  max ${repairs.max.toFixed(1)} ms`,
    );
    const e2e = !settings.BENCH_E2E
      ? undefined
      : await runEndToEnd(ns, {
          routes: settings.BENCH_ROUTES,
          nodes: settings.BENCH_NODES,
          table: TABLE,
          cidr: CIDR,
          nodeIP,
          vmIP,
          baselineMs: rows[0]?.values['ms'] ?? Number.NaN,
          repairs: settings.BENCH_E2E_REPAIRS,
        });
    const m = e2e?.memory;
    recordResult('route-forge', [
      codeCell(),
      `${settings.BENCH_ROUTES.toLocaleString('en-US')} routes: ${(rows[1]?.values['ms'] ?? NaN).toFixed(0)} ms, ${((rows[1]?.values['ms'] ?? NaN) / (rows[0]?.values['ms'] ?? NaN)).toFixed(2)}x ip -batch`,
      `${repairs.p50.toFixed(1)} / ${repairs.p99.toFixed(1)} ms`,
      e2e === undefined ? '-' : `${(e2e.convergedMs / 1000).toFixed(1)} s`,
      m === undefined
        ? '-'
        : `${m.converged.toFixed(0)} / ${m.after20.toFixed(0)} / ${m.after.toFixed(0)} MB (${m.repairs} repairs: ${(m.after / m.converged).toFixed(2)}x), peak ${m.peak.toFixed(0)} MB${e2e?.limited === true ? '' : ', no memory limit'}`,
    ]);
  } finally {
    await ns.remove();
  }
}

await main();
