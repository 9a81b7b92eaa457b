/**
 * The controller at scale with real KubeVirt (issue 37, item 4): VMs created through our API until
 * every one is `Running` with its address, with our controller bundled as it ships (its own process,
 * leader election off), upstream virt-controller and virt-api behind our api-rewriter, kube-scheduler,
 * kwok nodes, and the KubeVirt simulator only as node agent (virt-handler's part, its own process):
 * the rig of tests/integration/kubevirt (real-cluster.ts) on a control plane of the bench's own.
 *
 * Issue 37 asks for 10,000 VMs over 100 nodes; a 2-core machine does not run that in reasonable time,
 * so the counts are knobs (BENCH_VMS, BENCH_NODES) and the default is scaled down (200 VMs over 10
 * nodes: about 3 minutes here, on a loaded machine); the output says so. At the asked count the kwok
 * nodes (platform/local-cluster.ts createNodes: 8 CPUs, 32 Gi, 110 pods each) would not hold 100 such
 * VMs each (a quarter core requested per VM): that run needs bigger nodes first. Targets: no reconcile error other than conflicts, controller RSS
 * <= 400 MB, controller CPU <= 5 ms per VM.
 *
 * It prints: the time from the first create to every VM Running, and per VM; the ratio to bare creates
 * of the same VMs and of the objects of the converged state the bench can create without anything
 * acting on them (VM, internal VM, VirtualMachineIPAddress and its lease: controller.bench.ts's bare
 * row; the instance and the launcher pod are left out, virt-controller would act on them); the CPU
 * per VM of each process (the controller's from /proc) and the controller's peak RSS; the apiserver
 * writes per VM by writer, verb and resource from the audit log; and, sampled over time, the running
 * VMs, the controller's work queue depths and its reconcile errors and conflicts (its /metrics).
 *
 * The VMs carry no finalizer from the defaulting webhook (not run here): the controller writes it.
 * The controller runs under its Deployment's memory limit (a memory cgroup of its own, `cageFor`):
 * node sizes V8's heap from it, so its RSS is the one it has as shipped.
 *
 * `BENCH_PROFILE=true` also runs the controller under node's CPU profiler and prints where its time
 * went (its whole life: the caches' first list included, which is small next to the run at 100 VMs or more).
 *
 * `BENCH_HEAP_SNAPSHOT=true` takes a heap snapshot of the controller once all VMs run and prints what its memory is
 * (that run leaves the memory limit out: the snapshot's writer needs memory beside the heap).
 *
 * Knobs: BENCH_VMS, BENCH_NODES, BENCH_CONCURRENCY, BENCH_WORKERS, BENCH_SAMPLE, BENCH_STALL, BENCH_PROFILE, BENCH_HEAP_SNAPSHOT.
 *
 * Each run adds a dated row to tests/bench/RESULTS.md (section controller-scale; BENCH_RESULTS=false: not).
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import type { VirtualMachine } from '../../shared/api/resources/virtualmachine.js';
import { REPO_ROOT, startNodeProcess, type FunctionProcess } from '../../shared/runtime/testing/index.js';
import { ControllerConfigSchema } from '../../daemons/controller/config.js';
import type { Clients } from '../../daemons/controller/kube/resources.js';
import globalSetup from '../env/global-setup.js';
import globalTeardown from '../env/global-teardown.js';
import { getTestEnv } from '../env/index.js';
import { writesBetween, type AuditEvent } from '../integration/controller/audit.js';
import { baselineObjects, prepareWorld, type World } from '../integration/controller/bench-objects.js';
import { vm } from '../integration/controller/builders.js';
import { controllerEnv, TEST_FIELD_MANAGER } from '../integration/controller/scope.js';
import { startRealCluster, type RealCluster } from '../integration/kubevirt/real-cluster.js';
import type { Seeded } from '../integration/kubevirt/seed.js';
import { cpuProfileArgs, formatProfile, summarizeProfileDir } from './cpu-profile.js';
import { formatHeapSummary, heapSnapshotArgs, summarizeHeapSnapshot, takeHeapSnapshot } from './heap-snapshot.js';
import { controllerCounters, queueMeans, reconcileCounts, watchConvergence } from './controller-run.js';
import {
  codeCell,
  cpuWindow,
  knobs,
  machineCell,
  nowMs,
  pool,
  print,
  printComparison,
  processCpuSeconds,
  processMemoryMb,
  recordResult,
  summarize,
  type CpuUse,
  type Summary,
} from './lib.js';
import { bundledArgs, cageFor, type Caged } from './processes.js';

/** What issue 37 asks for; the bench runs a scaled-down count of it. */
const ASKED = { vms: 10_000, nodes: 100 };
const TARGETS = { cpuMsPerVm: 5, rssMb: 400 };
const MB = 1024 * 1024;

/** The controller's own defaults: the bench runs what ships unless a knob says otherwise. */
const SHIPPED_WORKERS = ControllerConfigSchema.shape.RECONCILE_WORKERS.parse(undefined);
const SHIPPED_LOG_LEVEL = ControllerConfigSchema.shape.LOG_LEVEL.parse(undefined);

const settings = knobs(
  z.object({
    BENCH_VMS: env.int(200, 1).describe(`VirtualMachines (issue 37: ${ASKED.vms.toLocaleString('en-US')}; scaled down by default to run here)`),
    BENCH_NODES: env.int(10, 1).describe(`kwok nodes (issue 37: ${ASKED.nodes})`),
    BENCH_CONCURRENCY: env.int(16, 1).describe('Creates in flight from the client (every row)'),
    BENCH_WORKERS: env.int(SHIPPED_WORKERS, 1).describe(`RECONCILE_WORKERS of the controller (default: the shipped default, ${SHIPPED_WORKERS})`),
    BENCH_SAMPLE: env.duration('5s').describe("How often the controller's metrics and memory are sampled while the VMs converge"),
    BENCH_STALL: env.duration('5m').describe('Fail when no further VM has become Running for this long'),
    BENCH_PROFILE: env.bool(false).describe('Write a CPU profile of the controller and print its summary (its whole life)'),
    BENCH_HEAP_SNAPSHOT: env
      .bool(false)
      .describe('Take a heap snapshot of the controller once every VM runs (after the figures) and print what its memory is, by kind and by repeated string'),
  }),
);

/** Every VM of the run, in namespace `ns`: started at once, the size a kwok node fits many of. */
function runningVm(s: Seeded, ns: string, i: number): VirtualMachine {
  return vm({ namespace: ns, id: s.scope.id }, `vm-${i}`, s.className, {
    runPolicy: 'AlwaysOn',
    cpu: { cores: 1, coreFraction: '25%' },
    memory: { size: '256Mi' },
    blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: s.imageName }],
  });
}

const isRunning = (v: VirtualMachine): boolean => v.status?.phase === 'Running' && (v.status.ipAddress ?? '') !== '';

/** Creates `count` objects through `create`, `BENCH_CONCURRENCY` in flight; milliseconds taken. */
async function timedCreates(count: number, create: (i: number) => Promise<unknown>): Promise<number> {
  const start = nowMs();
  await pool(
    Array.from({ length: count }, (_, i) => () => create(i)),
    settings.BENCH_CONCURRENCY,
  );
  return nowMs() - start;
}

/** One sample of the controller while the VMs converge. */
interface Sample {
  readonly seconds: number;
  readonly running: number;
  /** Work queue depth by controller. */
  readonly depth: ReadonlyMap<string, number>;
  /** Reconciles so far in the run that ended in `error` and in `conflict`. */
  readonly errors: number;
  readonly conflicts: number;
  readonly rssMb: number;
  /** V8's heap committed and in use, MB (the rest of RSS: Buffers, code, malloc). */
  readonly heapTotalMb: number;
  readonly heapUsedMb: number;
  readonly cpuSeconds: number;
}

/** Reconciles of every controller with `result` between two counter readings. */
function reconciles(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>, result: string): number {
  let sum = 0;
  for (const [key, value] of after) if (key.startsWith('reconcile ') && key.endsWith(` ${result}`)) sum += value - (before.get(key) ?? 0);
  return sum;
}

/** The field manager a request named, else the first word of its User-Agent: who wrote. */
function writer(e: AuditEvent): string {
  const manager = /[?&]fieldManager=([^&]+)/.exec(e.requestURI)?.[1];
  if (manager !== undefined) return decodeURIComponent(manager);
  return (e.userAgent ?? '?').split(/[/ ]/, 1)[0] ?? '?';
}

/** Writes per VM in the run's namespace and to cluster-scoped objects, `writer: verb resource[/subresource]` → count per VM, the bench's own VM creates left out. */
function writesPerVm(events: readonly AuditEvent[], ns: string, own: string, vms: number): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const e of events) {
    const ref = e.objectRef;
    if (ref?.namespace !== undefined && ref.namespace !== ns) continue;
    const who = writer(e);
    if (who === own && e.verb === 'create' && ref?.resource === 'virtualmachines') continue;
    const key = `${who}: ${e.verb} ${ref?.resource ?? e.requestURI}${ref?.subresource === undefined ? '' : `/${ref.subresource}`}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]): [string, number] => [key, n / vms]).sort((a, b) => b[1] - a[1]);
}

/** Where `BENCH_PROFILE` has the controller write its profile (open it in Chrome DevTools). */
const CONTROLLER_PROFILES = join(REPO_ROOT, 'dist', '.bench', 'controller-scale-profile');
/** Where `BENCH_HEAP_SNAPSHOT` has the controller write its heap snapshot (open it in Chrome DevTools). */
const CONTROLLER_HEAP = join(REPO_ROOT, 'dist', '.bench', 'controller-scale-heap');

/**
 * The memory cgroup the controller runs in, limited as its Deployment limits its container (a heap
 * snapshot's writer needs memory of its own beside the heap, so that run is left unconstrained).
 */
function controllerCage(): Caged {
  return cageFor(
    'knative/daemons/controller/deployment.yaml',
    'controller',
    settings.BENCH_HEAP_SNAPSHOT ? 'BENCH_HEAP_SNAPSHOT: the snapshot writer needs memory beside the heap' : undefined,
  );
}

/** Our controller (bundled, as it ships) against KubeVirt's apiserver, for the cluster's scope; resolves once its caches synced, with its metrics URL. */
async function startOurController(cluster: RealCluster, caged: Caged): Promise<{ proc: FunctionProcess; metricsUrl: string }> {
  const env = controllerEnv(cluster.seeded.scope, {
    KUBECONFIG: cluster.kv.apiserver.kubeconfigPath,
    VIRTUAL_MACHINE_CIDRS: '10.66.0.0/16',
    RECONCILE_WORKERS: String(settings.BENCH_WORKERS),
    METRICS_AUTH: 'none',
    LOG_LEVEL: SHIPPED_LOG_LEVEL,
  });
  await rm(CONTROLLER_PROFILES, { recursive: true, force: true });
  await rm(CONTROLLER_HEAP, { recursive: true, force: true });
  const args = [
    ...(settings.BENCH_PROFILE ? cpuProfileArgs(CONTROLLER_PROFILES) : []),
    ...(settings.BENCH_HEAP_SNAPSHOT ? heapSnapshotArgs(CONTROLLER_HEAP) : []),
    ...(await bundledArgs('daemons/controller/main.ts', 'bundled')),
  ];
  const proc = startNodeProcess(args, { env, ...caged.start });
  try {
    await proc.waitForLog((r) => r['msg'] === 'caches synced, reconcilers running', 120_000);
    const started = await proc.waitForLog((r) => r['msg'] === 'started: health and metrics served', 60_000);
    return { proc, metricsUrl: `http://127.0.0.1:${String(started['healthPort'])}/metrics` };
  } catch (err: unknown) {
    proc.kill();
    throw err;
  }
}

/** The KubeVirt simulator as node agent only (bundled, its own process) on the scope's namespace; resolves once it runs. */
async function startNodeAgent(cluster: RealCluster): Promise<FunctionProcess> {
  const proc = startNodeProcess(await bundledArgs('platform/simulators/kubevirt-simulator/main.ts', 'bundled'), {
    env: { KUBECONFIG: cluster.kv.apiserver.kubeconfigPath, ROLE: 'node-agent', WATCH_NAMESPACE: cluster.seeded.scope.namespace },
  });
  try {
    await proc.waitForLog((r) => r['msg'] === 'kubevirt simulator started', 120_000);
    return proc;
  } catch (err: unknown) {
    proc.kill();
    throw err;
  }
}

async function stopProcess(proc: FunctionProcess): Promise<void> {
  proc.child.kill('SIGTERM');
  await proc.exited;
}

/** The figures of the converging run. */
interface Run {
  readonly ms: number;
  readonly cpu: CpuUse;
  readonly samples: readonly Sample[];
  readonly results: Array<[string, number]>;
  /** Per controller: mean ms a key waited in its queue, mean ms of a reconcile. */
  readonly queues: Array<[string, { waitMs: number; workMs: number }]>;
  readonly peakRssMb: number;
  readonly idleRssMb: number;
  readonly writes: Array<[string, number]>;
  /** Per VM, ms from its create's answer to Running. */
  readonly latency: Summary;
}

/**
 * Create the VMs in the scope's namespace and wait until every one is Running, sampling the
 * controller every BENCH_SAMPLE; fails when no VM became Running for BENCH_STALL.
 */
async function converge(c: Clients, cluster: RealCluster, pids: ReadonlyMap<string, number>, controller: { pid: number; metricsUrl: string }): Promise<Run> {
  const n = settings.BENCH_VMS;
  const ns = cluster.seeded.scope.namespace;
  // Per VM: when its create returned, and when the watch first saw it Running.
  const createdAt = new Map<string, number>();
  const runningAt = new Map<string, number>();
  const converged = watchConvergence(c, ns, n, (v) => {
    const name = v.metadata.name ?? '';
    if (!isRunning(v)) return false;
    if (!runningAt.has(name)) runningAt.set(name, nowMs());
    return true;
  });
  await converged.synced;
  const countersBefore = await controllerCounters(controller.metricsUrl);
  const idleRssMb = processMemoryMb(controller.pid).rss;
  const cpuBefore = processCpuSeconds(controller.pid);
  const samples: Sample[] = [];
  const cpu = cpuWindow(pids);
  const startWall = Date.now();
  const start = nowMs();
  let lastProgress = { running: 0, at: start };
  const sample = async (): Promise<void> => {
    const counters = await controllerCounters(controller.metricsUrl);
    const depth = new Map([...counters].filter(([key]) => key.startsWith('depth ')).map(([key, value]) => [key.slice('depth '.length), value]));
    const running = converged.ready();
    samples.push({
      seconds: (nowMs() - start) / 1000,
      running,
      depth,
      errors: reconciles(countersBefore, counters, 'error'),
      conflicts: reconciles(countersBefore, counters, 'conflict'),
      rssMb: processMemoryMb(controller.pid).rss,
      heapTotalMb: (counters.get('heap total') ?? Number.NaN) / MB,
      heapUsedMb: (counters.get('heap used') ?? Number.NaN) / MB,
      cpuSeconds: processCpuSeconds(controller.pid) - cpuBefore,
    });
    if (running > lastProgress.running) lastProgress = { running, at: nowMs() };
  };
  let timer: NodeJS.Timeout | undefined;
  let sampling = true;
  const stalled = new Promise<never>((_, reject) => {
    const tick = (): void => {
      sample().then(
        () => {
          if (!sampling) return;
          if (nowMs() - lastProgress.at > settings.BENCH_STALL) {
            reject(new Error(`no VM became Running for ${settings.BENCH_STALL / 1000} s (${converged.ready()} of ${n} Running)`));
          } else timer = setTimeout(tick, settings.BENCH_SAMPLE);
        },
        (err: unknown) => reject(err instanceof Error ? err : new Error(String(err))),
      );
    };
    timer = setTimeout(tick, settings.BENCH_SAMPLE);
  });
  // Seen by the race below; a sample that fails once the VMs converged is of no interest.
  stalled.catch(() => undefined);
  try {
    await timedCreates(n, async (i) => {
      const created = await c.vms.create(runningVm(cluster.seeded, ns, i));
      createdAt.set(created.metadata.name ?? '', nowMs());
    });
    print(`[controller-scale] ${n} VMs created in ${((nowMs() - start) / 1000).toFixed(1)} s; waiting for every one to run`);
    await Promise.race([converged.done, stalled]);
  } finally {
    sampling = false;
    clearTimeout(timer);
    await converged.stop();
  }
  const ms = nowMs() - start;
  const used = cpu();
  const endWall = Date.now();
  await sample();
  const countersAfter = await controllerCounters(controller.metricsUrl);
  // Audit lines are written once the request completes: the last ones may lag the watch.
  const events = await writesBetween(startWall, endWall);
  return {
    ms,
    cpu: used,
    samples,
    results: reconcileCounts(countersBefore, countersAfter),
    queues: queueMeans(countersBefore, countersAfter),
    peakRssMb: processMemoryMb(controller.pid).peak,
    idleRssMb,
    writes: writesPerVm(events, ns, TEST_FIELD_MANAGER, n),
    latency: summarize([...runningAt].map(([name, at]) => at - (createdAt.get(name) ?? start))),
  };
}

/** A fresh namespace for a bare row. */
async function bareNamespace(world: World, row: string): Promise<string> {
  return world.namespace(`bare-${row}-${Date.now().toString(36)}`);
}

function printSamples(samples: readonly Sample[]): void {
  // The queues that held anything at some sample (the controller has a dozen, most idle here).
  const names = [...new Set(samples.flatMap((s) => [...s.depth].filter(([, d]) => d > 0).map(([q]) => q)))].sort();
  print(
    `\n== over time (every ${settings.BENCH_SAMPLE / 1000} s): Running VMs, the controller's work queue depths, reconcile errors / conflicts so far, RSS, V8's heap committed / in use, CPU so far ==`,
  );
  print(['     s', 'running', ...names.map((q) => `depth ${q}`), 'errors', 'conflicts', 'RSS MB', 'heap MB', 'CPU s'].join('  '));
  for (const s of samples) {
    print(
      [
        s.seconds.toFixed(0).padStart(6),
        String(s.running).padStart(7),
        ...names.map((q) => String(s.depth.get(q) ?? 0).padStart(`depth ${q}`.length)),
        String(s.errors).padStart(6),
        String(s.conflicts).padStart(9),
        s.rssMb.toFixed(0).padStart(6),
        `${s.heapTotalMb.toFixed(0)} / ${s.heapUsedMb.toFixed(0)}`.padStart(9),
        s.cpuSeconds.toFixed(1).padStart(5),
      ].join('  '),
    );
  }
  const peak = Math.max(0, ...samples.map((s) => [...s.depth.values()].reduce((a, b) => a + b, 0)));
  print(`peak of the summed queue depths: ${peak}`);
}

function printCpu(cpu: CpuUse, n: number): void {
  print(
    `\n[controller-scale] CPU ms per VM by process, create to all Running (cores busy: ${(100 * cpu.busy).toFixed(0)} % over ${cpu.seconds.toFixed(1)} s, the machine's other jobs included):`,
  );
  for (const [name, seconds] of [...cpu.processes].sort((a, b) => b[1] - a[1])) print(`  ${((1000 * seconds) / n).toFixed(2).padStart(8)}  ${name}`);
}

const verdict = (met: boolean): string => (met ? 'met' : 'MISSED');

async function main(): Promise<void> {
  const n = settings.BENCH_VMS;
  const scaled = `${n.toLocaleString('en-US')} VMs over ${settings.BENCH_NODES} nodes (issue 37 asks for ${ASKED.vms.toLocaleString('en-US')} over ${ASKED.nodes}: scaled down)`;
  print(
    `[controller-scale] ${scaled}; ${settings.BENCH_CONCURRENCY} creates in flight, ${settings.BENCH_WORKERS} workers${settings.BENCH_WORKERS === SHIPPED_WORKERS ? ' (shipped default)' : ' (NOT the shipped default)'}`,
  );
  await globalSetup();
  let cluster: RealCluster | undefined;
  let caged: Caged | undefined;
  const processes: FunctionProcess[] = [];
  try {
    cluster = await startRealCluster('bench-scale', { nodes: settings.BENCH_NODES });
    const { seeded } = cluster;
    const { c } = seeded;
    const world = await prepareWorld(c, cluster.kv.apiserver.kubeconfigPath);
    // Bare rows first, in namespaces nothing of ours watches: the same VMs, then the objects of the converged state.
    const bareVms = await bareNamespace(world, 'vms');
    const bareVmsMs = await timedCreates(n, (i) => c.vms.create(runningVm(seeded, bareVms, i)));
    const bareAllNs = await bareNamespace(world, 'all');
    const objects = baselineObjects(world, bareAllNs, n, 200);
    const bareAllMs = await timedCreates(objects.length, (i) => objects[i]?.(c) ?? Promise.resolve());
    const agent = await startNodeAgent(cluster);
    processes.push(agent);
    caged = controllerCage();
    print(`[controller-scale] the controller runs ${caged.note}`);
    const ours = await startOurController(cluster, caged);
    processes.push(ours.proc);
    const controllerPid = ours.proc.child.pid ?? 0;
    const state = getTestEnv();
    const pids = new Map<string, number>([
      ['controller', controllerPid],
      ['node agent (simulator)', agent.child.pid ?? 0],
      ['virt-controller', cluster.kv.virtController.pid],
      ['virt-api', cluster.kv.virtApi.pid],
      ['api-rewriter', cluster.kv.rewriter.child.pid ?? 0],
      ['kube-apiserver', cluster.kv.apiserver.pid()],
      ['etcd', state.pids['etcd'] ?? 0],
      ...cluster.processes.map((p): [string, number] => [p.name, p.pid]),
    ]);
    const run = await converge(c, cluster, pids, { pid: controllerPid, metricsUrl: ours.metricsUrl });

    const row = (name: string, ms: number, note: string): { name: string; values: Record<string, number>; note: string } => ({
      name,
      values: { seconds: ms / 1000, msPerVm: ms / n },
      note,
    });
    const columns = [
      { key: 'seconds', label: 'seconds', digits: 2, ratio: true },
      { key: 'msPerVm', label: 'ms per VM', digits: 1 },
    ];
    const running = row('create to all Running', run.ms, `${n} VM creates; controller, virt-controller, scheduler and node agent do the rest`);
    const title = `${scaled}: create to every VM Running`;
    printComparison(`${title}, against bare creates of the same VMs`, columns, [row('bare VM creates', bareVmsMs, `${n} creates`), running], 'bare VM creates');
    printComparison(
      `${title}, against bare creates of the converged state's objects`,
      columns,
      [row('bare creates of the objects', bareAllMs, `${objects.length} creates: VM, internal VM, VMIP, lease (not the instance and pod)`), running],
      'bare creates of the objects',
    );
    printSamples(run.samples);
    printCpu(run.cpu, n);
    const controllerCpuMs = (1000 * (run.cpu.processes.get('controller') ?? Number.NaN)) / n;
    const errors = run.results.filter(([key]) => key.endsWith(' error')).reduce((sum, [, count]) => sum + count, 0);
    const conflicts = run.results.filter(([key]) => key.endsWith(' conflict')).reduce((sum, [, count]) => sum + count, 0);
    const reconcilesPerVm = run.results.reduce((sum, [, count]) => sum + count, 0) / n;
    print(
      `\n[controller-scale] reconciles in the run: ${reconcilesPerVm.toFixed(1)} per VM (controller result: count): ${run.results.map(([key, count]) => `${key} ${count}`).join(', ')}`,
    );
    print(
      `[controller-scale] work queues: mean wait before a reconcile / mean reconcile, ms: ${run.queues.map(([name, q]) => `${name} ${q.waitMs.toFixed(1)} / ${q.workMs.toFixed(1)}`).join(', ')}`,
    );
    // What the errors were (the runner logs each as a warning with the error): a miss says why.
    const failed = ours.proc.logs.filter((r) => r['msg'] === 'reconcile failed, requeued');
    for (const r of failed.slice(0, 10))
      print(`  reconcile error: ${JSON.stringify(r['controller'])} ${JSON.stringify(r['object'])}: ${JSON.stringify(r['err']).slice(0, 400)}`);
    const totalWrites = run.writes.reduce((sum, [, perVm]) => sum + perVm, 0);
    print(
      `[controller-scale] apiserver writes per VM (audit log, the run's namespace and cluster-scoped objects, the bench's VM creates left out): ${totalWrites.toFixed(2)}`,
    );
    for (const [key, perVm] of run.writes) print(`  ${perVm.toFixed(2).padStart(7)}  ${key}`);
    const ratioVms = run.ms / bareVmsMs;
    const ratioAll = run.ms / bareAllMs;
    print(`\n== against the targets (${scaled}; ${machineCell()}) ==`);
    print(`  reconcile errors other than conflicts: ${errors} (conflicts ${conflicts}): ${verdict(errors === 0)}`);
    print(
      `  controller peak RSS: ${run.peakRssMb.toFixed(0)} MB (caches synced, before the creates: ${run.idleRssMb.toFixed(0)} MB), target <= ${TARGETS.rssMb} MB: ${verdict(run.peakRssMb <= TARGETS.rssMb)}`,
    );
    print(`  the controller's ${caged.usage()}`);
    print(`  controller CPU per VM: ${controllerCpuMs.toFixed(2)} ms, target <= ${TARGETS.cpuMsPerVm} ms: ${verdict(controllerCpuMs <= TARGETS.cpuMsPerVm)}`);
    print(
      `  create to all Running: ${(run.ms / 1000).toFixed(1)} s, ${(run.ms / n).toFixed(1)} ms per VM; ${ratioVms.toFixed(2)}x bare VM creates, ${ratioAll.toFixed(2)}x bare creates of the objects (no target)`,
    );
    print(
      `  one VM, its create's answer to Running: p50 ${(run.latency.p50 / 1000).toFixed(1)} s, p99 ${(run.latency.p99 / 1000).toFixed(1)} s, max ${(run.latency.max / 1000).toFixed(1)} s`,
    );
    recordResult('controller-scale', [
      codeCell(),
      `${n.toLocaleString('en-US')} / ${settings.BENCH_NODES} (scaled down from ${ASKED.vms.toLocaleString('en-US')} / ${ASKED.nodes})`,
      `${(run.ms / 1000).toFixed(1)} s, ${(run.ms / n).toFixed(1)} ms per VM (one VM p50 ${(run.latency.p50 / 1000).toFixed(1)} s, p99 ${(run.latency.p99 / 1000).toFixed(1)} s)`,
      `${ratioVms.toFixed(2)}x / ${ratioAll.toFixed(2)}x`,
      `${controllerCpuMs.toFixed(2)} ms (${verdict(controllerCpuMs <= TARGETS.cpuMsPerVm)})`,
      `${run.peakRssMb.toFixed(0)} MB (${verdict(run.peakRssMb <= TARGETS.rssMb)})${caged.cage === undefined ? ', no memory limit' : ''}`,
      `${errors} / ${conflicts} (${verdict(errors === 0)})`,
      totalWrites.toFixed(2),
    ]);
    if (settings.BENCH_HEAP_SNAPSHOT) {
      await mkdir(CONTROLLER_HEAP, { recursive: true });
      const file = await takeHeapSnapshot(controllerPid, CONTROLLER_HEAP);
      // The snapshot collected every garbage first: what the heap holds live, against what the process holds.
      const after = await controllerCounters(ours.metricsUrl);
      print(
        `\n[controller-scale] after the snapshot's full GC: RSS ${processMemoryMb(controllerPid).rss.toFixed(0)} MB (the snapshot writer's own buffers included), V8 heap committed ${((after.get('heap total') ?? Number.NaN) / MB).toFixed(0)} MB, in use ${((after.get('heap used') ?? Number.NaN) / MB).toFixed(0)} MB, external ${((after.get('external') ?? Number.NaN) / MB).toFixed(0)} MB`,
      );
      print(formatHeapSummary(`heap of the controller with all ${n} VMs Running (${file})`, summarizeHeapSnapshot(file, 40)));
    }
  } finally {
    for (const p of processes.reverse()) await stopProcess(p);
    caged?.remove();
    await cluster?.stop();
    await globalTeardown();
  }
  // Written when the controller exited (stopped above).
  if (settings.BENCH_PROFILE) print(formatProfile('CPU profile of the controller (its whole life)', summarizeProfileDir(CONTROLLER_PROFILES, 40)));
}

await main();
