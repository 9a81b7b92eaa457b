/**
 * Controller benchmark: how long 1,000 VirtualMachines take to reach their expected internal objects
 * and status (internal VM built, address leased and attached, phase Stopped with the IP) with the
 * controller running as it ships (bundled, its own process, leader election off), as a ratio to the
 * time the same apiserver takes for bare creates, sent with the same client concurrency: of the 1,000
 * VirtualMachines alone, and of every object of the converged state (each VM, its internal VM, its
 * VirtualMachineIPAddress and its lease). Target (issue 6): under 1.5x.
 *
 * It also prints the writes the controller made per converged VM, by resource and verb, from the
 * apiserver's own `apiserver_request_total` (the bench's own VM creates taken out).
 *
 * As deployed, every VM create goes through the defaulting webhook (the admission function, bundled,
 * its own process, HTTPS, the install's MutatingWebhookConfiguration), which also sets the
 * controller's `vm-cleanup` finalizer; every row pays for it alike. The validating webhooks are left
 * out: the bench configures the address ranges through the controller's environment, not a
 * ModuleConfig, so the address checks would refuse its addresses. `BENCH_WEBHOOK=false` runs without
 * the webhook (the controller then writes the finalizer itself).
 *
 * Where the time goes: the CPU seconds each process (the controller, the apiserver, etcd, the
 * controller-manager, the webhook, the bench's own client) used per VM in the last converging run and in
 * the last bare run, and how busy the machine's cores were meanwhile (other jobs included).
 * `BENCH_PROFILE=true` also runs the controller under node's CPU profiler and prints where its time
 * went (the profile covers the process's whole life: start, cache sync, convergence, shutdown; the
 * files stay in `dist/.bench/controller-profiles/`).
 *
 * `BENCH_APISERVER_PROFILE=<seconds>` turns on the apiserver's profiling endpoint and records its CPU
 * for that many seconds from the first VM create of the last converging run into
 * `dist/.bench/apiserver-controller.pprof` (read it with `go tool pprof -top`; the bench prints its
 * top when `go` is on the PATH).
 *
 * Knobs: BENCH_VMS, BENCH_CONCURRENCY, BENCH_WORKERS, BENCH_ROUNDS, BENCH_WEBHOOK, BENCH_PROFILE,
 * BENCH_APISERVER_PROFILE.
 *
 * Each run adds a dated row to tests/bench/RESULTS.md (section controller; BENCH_RESULTS=false: not).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { KubeClient } from '../../shared/kube/index.js';
import { Finalizer } from '../../shared/api/finalizers.js';
import { listeningPort, REPO_ROOT, startNodeProcess, type LogRecord } from '../../shared/runtime/testing/index.js';
import { waitFor } from '../../shared/testing/wait.js';
import { ControllerConfigSchema } from '../../daemons/controller/config.js';
import { makeClients, type Clients } from '../../daemons/controller/kube/resources.js';
import { ensureBinaries } from '../env/binaries.js';
import { startControlPlane, type ControlPlaneState } from '../env/control-plane.js';
import { installCrds } from '../env/crds.js';
import { createCA, issueCert, newKubeConfig } from '../env/index.js';
import { runKubectl } from '../env/kubectl.js';
import { localWebhookConfigurations } from '../integration/admission/configurations.js';
import { baselineObjects, prepareWorld, vmObject, type World } from '../integration/controller/bench-objects.js';
import { cpuProfileArgs, formatProfile, summarizeProfileDir } from './cpu-profile.js';
import {
  codeCell,
  cpuWindow,
  interleaved,
  knobs,
  medianBy,
  nowMs,
  pool,
  print,
  printComparison,
  processMemoryMb,
  recordResult,
  type CpuUse,
  type Measurement,
} from './lib.js';
import { controllerCounters, queueMeans, reconcileCounts, watchConvergence } from './controller-run.js';
import { bundledArgs } from './processes.js';

/** The controller's own default worker count: the bench runs what ships unless BENCH_WORKERS says otherwise. */
const SHIPPED_WORKERS = ControllerConfigSchema.shape.RECONCILE_WORKERS.parse(undefined);

const settings = knobs(
  z.object({
    BENCH_VMS: env.int(1_000, 1).describe('VirtualMachines per run'),
    BENCH_CONCURRENCY: env.int(32, 1).describe('Creates in flight from the client (both rows)'),
    BENCH_WORKERS: env.int(SHIPPED_WORKERS, 1).describe(`RECONCILE_WORKERS of the controller (default: the shipped default, ${SHIPPED_WORKERS})`),
    BENCH_ROUNDS: env.int(1, 1).describe('Runs per row, interleaved; the median run is reported'),
    BENCH_WEBHOOK: env.bool(true).describe('VM creates go through the defaulting webhook, as deployed'),
    BENCH_APISERVER_PROFILE: env.int(0, 0).describe("Seconds of the apiserver's CPU profile from the first VM create of the last converging run (0: none)"),
    BENCH_PROFILE: env.bool(false).describe("Write a CPU profile of the controller and print its summary (the controller's last run)"),
  }),
);

const run = promisify(execFile);

let round = 0;

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY']);

/** The apiserver's request counters, `VERB resource[/subresource]` → count, from its /metrics. */
async function apiserverRequests(kube: KubeClient): Promise<Map<string, number>> {
  const res = await kube.rest.stream({ method: 'GET', path: '/metrics', what: 'read the apiserver metrics' });
  let text = '';
  for await (const chunk of res) text += String(chunk);
  const writes = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (labels['resource'] === undefined || labels['resource'] === '') continue;
    const key = `${labels['verb']} ${labels['resource']}${labels['subresource'] ? `/${labels['subresource']}` : ''}`;
    writes.set(key, (writes.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return writes;
}

/**
 * Requests per converged VM between two counter readings, the writes (minus the bench's own VM
 * creates) and the reads (every client's: the controller's, the webhook's, the bench's watches).
 */
function requestsPerVm(before: Map<string, number>, after: Map<string, number>, vms: number): Record<'writes' | 'reads', Array<[string, number]>> {
  const rows: Array<[string, number]> = [];
  for (const [key, count] of after) {
    const own = key === 'POST virtualmachines' ? vms : 0;
    const delta = count - (before.get(key) ?? 0) - own;
    if (delta > 0) rows.push([key, delta / vms]);
  }
  rows.sort((a, b) => b[1] - a[1]);
  const isWrite = ([key]: [string, number]): boolean => WRITE_VERBS.has(key.slice(0, key.indexOf(' ')));
  return { writes: rows.filter(isWrite), reads: rows.filter((r) => !isWrite(r)) };
}

/** The processes of the run whose CPU the bench counts, name → pid (the bench itself is measured in-process). */
const measured = new Map<string, number>();

/** The CPU use of the last run of each row. */
const lastCpu = new Map<string, CpuUse>();

let lastRequests: Record<'writes' | 'reads', Array<[string, number]>> = { writes: [], reads: [] };
/** The controller's resident memory in the last run: after its caches synced, and its peak at convergence. */
let lastMemory: { idle: number; peak: number } | undefined;
/** Reconciles per VM in the last converging run, `controller result` → count per VM. */
let lastReconciles: Array<[string, number]> = [];
/** Per controller in the last converging run: mean ms a key waited in the queue, and mean ms of a reconcile. */
let lastQueues: Array<[string, { waitMs: number; workMs: number }]> = [];

/** Reconciles per VM and the queue's mean wait and work per controller between two readings. */
function reconcileFigures(before: Map<string, number>, after: Map<string, number>, vms: number): void {
  lastReconciles = reconcileCounts(before, after).map(([key, count]): [string, number] => [key, count / vms]);
  lastQueues = queueMeans(before, after);
}

/** The controller's log lines while the last run converged. */
let lastLogs: readonly LogRecord[] = [];

/** Log lines per VM, by level and message, the most frequent first. */
function printLogs(vms: number): void {
  const counts = new Map<string, number>();
  let bytes = 0;
  for (const r of lastLogs) {
    const text = r['msg'] ?? r['raw'];
    const key = `${String(r['level'] ?? r['stream'])}: ${typeof text === 'string' ? text : JSON.stringify(text)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    bytes += JSON.stringify(r).length;
  }
  print(
    `[controller] controller log lines per VM (last run, while converging): ${(lastLogs.length / vms).toFixed(2)}, about ${(bytes / vms).toFixed(0)} bytes`,
  );
  for (const [key, count] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, 8)) print(`  ${(count / vms).toFixed(2).padStart(6)}  ${key}`);
  // What went wrong, when something did: the distinct error messages of warnings and errors.
  const problems = new Map<string, number>();
  for (const r of lastLogs) {
    if (r['level'] !== 'warn' && r['level'] !== 'error' && r['level'] !== 'fatal') continue;
    const err = r['err'];
    const why = typeof err === 'object' && err !== null && 'message' in err ? String(err.message) : '';
    const key = `${String(r['level'])}: ${String(r['msg'])}${why === '' ? '' : `: ${why}`}`;
    problems.set(key, (problems.get(key) ?? 0) + 1);
  }
  for (const [key, count] of [...problems].sort((a, b) => b[1] - a[1]).slice(0, 5)) print(`  ${String(count).padStart(6)}x ${key.slice(0, 300)}`);
}

const WEBHOOK_LABEL = { key: 'bench-webhook', value: 'controller' };

/**
 * The admission function as it ships (bundled, its own process, HTTPS with a fresh CA) behind the
 * install's MutatingWebhookConfiguration, limited to namespaces labelled WEBHOOK_LABEL; resolves
 * once the apiserver calls it (a dry-run create comes back with the finalizer it adds).
 */
async function startDefaultingWebhook(cp: ControlPlaneState, workDir: string): Promise<{ stop: () => Promise<void> }> {
  const dir = join(workDir, 'webhook');
  const ca = await createCA(dir, 'webhook');
  const cert = await issueCert(ca, dir, 'serving', { commonName: '127.0.0.1', usage: 'server', ipAddresses: ['127.0.0.1'] });
  const proc = startNodeProcess(await bundledArgs('functions/admission/index.ts', 'bundled'), {
    env: { PORT: '0', HOST: '127.0.0.1', TLS_CERT_FILE: cert.certPath, TLS_KEY_FILE: cert.keyPath, KUBECONFIG: cp.kubeconfigPath, LOG_LEVEL: 'info' },
  });
  measured.set('webhook', proc.child.pid ?? 0);
  const stop = async (): Promise<void> => {
    measured.delete('webhook');
    proc.child.kill('SIGTERM');
    await proc.exited;
  };
  try {
    const url = `https://127.0.0.1:${await listeningPort(proc)}`;
    const caBundle = (await readFile(ca.certPath)).toString('base64');
    const configs = localWebhookConfigurations({ url, caBundle, label: WEBHOOK_LABEL }, ['MutatingWebhookConfiguration']);
    const created = await runKubectl(cp, ['create', '-f', '-'], { stdin: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: configs }) });
    if (created.code !== 0) throw new Error(`installing the webhook configuration failed: ${created.stderr}`);
    return { stop };
  } catch (err: unknown) {
    await stop();
    throw err;
  }
}

/** Wait until the apiserver calls the webhook for `ns`: a dry-run create comes back with the finalizer. */
async function untilDefaulting(c: Clients, world: World, ns: string): Promise<void> {
  await waitFor(
    'the defaulting webhook to take effect',
    async () => {
      const probe = await c.vms.create(vmObject(world, ns, -1), { dryRun: true });
      return probe.metadata.finalizers?.includes(Finalizer.vmCleanup) === true;
    },
    { timeoutMs: 60_000 },
  );
}

/** Bare creates of the VMs alone, nothing reconciling them. */
async function bareVMs(c: Clients, world: World): Promise<number> {
  const ns = await world.namespace(`vms-${round++}`);
  const start = nowMs();
  await pool(
    Array.from({ length: settings.BENCH_VMS }, (_, i) => () => c.vms.create(vmObject(world, ns, i))),
    settings.BENCH_CONCURRENCY,
  );
  return nowMs() - start;
}

/** Bare creates of every object of the converged state, created directly. */
async function bareAll(c: Clients, world: World): Promise<number> {
  const ns = await world.namespace(`all-${round}`);
  const tasks = baselineObjects(world, ns, settings.BENCH_VMS, 200 + round++).map((create) => () => create(c));
  const cpu = cpuWindow(measured);
  const start = nowMs();
  await pool(tasks, settings.BENCH_CONCURRENCY);
  const ms = nowMs() - start;
  lastCpu.set('bare creates of all objects', cpu());
  return ms;
}

/** VMs created by the client; the controller turns them into everything else. */
async function withController(c: Clients, world: World, args: readonly string[], kube: KubeClient): Promise<number> {
  const ns = await world.namespace(`ctl-${round}`);
  const proc = startNodeProcess(args, {
    env: {
      KUBECONFIG: world.kubeconfigPath,
      LEADER_ELECTION: 'false',
      WATCH_NAMESPACE: ns,
      HEALTH_PORT: '0',
      MODULE_CONFIG_WATCH: 'false',
      VIRTUAL_MACHINE_CIDRS: `10.${200 + round++}.0.0/16`,
      RECONCILE_WORKERS: String(settings.BENCH_WORKERS),
      METRICS_AUTH: 'none',
    },
  });
  try {
    await proc.waitForLog((r) => r['msg'] === 'caches synced, reconcilers running', 60_000);
    const converged = watchConvergence(c, ns, settings.BENCH_VMS, (vm) => vm.status?.phase === 'Stopped' && vm.status.ipAddress !== undefined);
    await converged.synced;
    const before = await apiserverRequests(kube);
    const idle = processMemoryMb(proc.child.pid ?? 0).rss;
    const logsBefore = proc.logs.length;
    const started = await proc.waitForLog((r) => r['msg'] === 'started: health and metrics served', 10_000);
    const metricsUrl = `http://127.0.0.1:${String(started['healthPort'])}/metrics`;
    const countersBefore = await controllerCounters(metricsUrl);
    measured.set('controller', proc.child.pid ?? 0);
    const cpu = cpuWindow(measured);
    const apiProfile = settings.BENCH_APISERVER_PROFILE > 0 ? apiserverProfile(kube, settings.BENCH_APISERVER_PROFILE) : undefined;
    const start = nowMs();
    await pool(
      Array.from({ length: settings.BENCH_VMS }, (_, i) => () => c.vms.create(vmObject(world, ns, i))),
      settings.BENCH_CONCURRENCY,
    );
    await converged.done;
    const ms = nowMs() - start;
    lastCpu.set('controller', cpu());
    await apiProfile;
    lastMemory = { idle, peak: processMemoryMb(proc.child.pid ?? 0).peak };
    lastLogs = proc.logs.slice(logsBefore);
    reconcileFigures(countersBefore, await controllerCounters(metricsUrl), settings.BENCH_VMS);
    lastRequests = requestsPerVm(before, await apiserverRequests(kube), settings.BENCH_VMS);
    await converged.stop();
    return ms;
  } finally {
    measured.delete('controller');
    proc.child.kill('SIGTERM');
    await proc.exited;
  }
}

/** Where `BENCH_PROFILE` has the controller write its profiles (one per run; open one in Chrome DevTools). */
const CONTROLLER_PROFILES = join(REPO_ROOT, 'dist', '.bench', 'controller-profiles');

/** Where `BENCH_APISERVER_PROFILE` writes the apiserver's profile. */
const APISERVER_PROFILE = join(REPO_ROOT, 'dist', '.bench', 'apiserver-controller.pprof');

/** Record the apiserver's CPU for `seconds` into APISERVER_PROFILE (its pprof endpoint, as cluster admin). */
async function apiserverProfile(kube: KubeClient, seconds: number): Promise<void> {
  const res = await kube.rest.stream({
    method: 'GET',
    path: `/debug/pprof/profile?seconds=${seconds}`,
    what: 'profile the apiserver',
    timeoutMs: (seconds + 30) * 1000,
  });
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  await writeFile(APISERVER_PROFILE, Buffer.concat(chunks));
}

/** The top of the apiserver's profile through `go tool pprof`, or where to find it when there is no `go`. */
async function printApiserverProfile(): Promise<void> {
  const top = await run('go', ['tool', 'pprof', '-top', '-nodecount=40', APISERVER_PROFILE]).catch(() => undefined);
  print(`\n== apiserver CPU profile (${APISERVER_PROFILE}) ==\n${top?.stdout ?? '(no go on the PATH: go tool pprof -top <file>)'}`);
}

/** CPU milliseconds per VM by process in the last run of each row, and how busy the cores were; returns the controller run's counted CPU against bare. */
function printCpu(vms: number): number | undefined {
  const rows = [...lastCpu];
  const names = [...new Set(rows.flatMap(([, use]) => [...use.processes.keys()]))];
  print(`[controller] CPU ms per VM by process (last run of each row; ${names.length} processes counted, the machine's other jobs not):`);
  print(`  ${'process'.padEnd(24)}${rows.map(([row]) => row.padStart(30)).join('')}`);
  const line = (label: string, value: (use: CpuUse) => string): void =>
    print(`  ${label.padEnd(24)}${rows.map(([, use]) => value(use).padStart(30)).join('')}`);
  for (const name of names) line(name, (use) => ((1000 * (use.processes.get(name) ?? 0)) / vms).toFixed(2));
  const total = (use: CpuUse): number => [...use.processes.values()].reduce((a, b) => a + b, 0);
  line('all counted', (use) => ((1000 * total(use)) / vms).toFixed(2));
  line('cores busy (machine)', (use) => `${(100 * use.busy).toFixed(0)} % of ${cpus().length} over ${use.seconds.toFixed(1)} s`);
  const [bare, converging] = rows.map(([, use]) => total(use));
  if (bare !== undefined && converging !== undefined && bare > 0) {
    print(`[controller] counted CPU per VM, controller against bare: ${(converging / bare).toFixed(2)}x (on saturated cores the seconds follow this ratio)`);
    return converging / bare;
  }
  return undefined;
}

async function main(): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), 'bench-controller-'));
  const cp = await startControlPlane(await ensureBinaries(), workDir, {
    apiServerArgs: settings.BENCH_APISERVER_PROFILE > 0 ? ['--profiling=true'] : [],
  });
  const kube = new KubeClient(newKubeConfig(cp.state.kubeconfigPath));
  let webhook: { stop: () => Promise<void> } | undefined;
  try {
    await installCrds(cp.state);
    const c = makeClients(kube, 'bench');
    const world = await prepareWorld(c, cp.state.kubeconfigPath, settings.BENCH_WEBHOOK ? { [WEBHOOK_LABEL.key]: WEBHOOK_LABEL.value } : {});
    if (settings.BENCH_WEBHOOK) {
      webhook = await startDefaultingWebhook(cp.state, workDir);
      await untilDefaulting(c, world, await world.namespace('webhook-probe'));
    }
    for (const [name, pid] of Object.entries(cp.state.pids)) measured.set(name, pid);
    await rm(CONTROLLER_PROFILES, { recursive: true, force: true });
    const args = [...(settings.BENCH_PROFILE ? cpuProfileArgs(CONTROLLER_PROFILES) : []), ...(await bundledArgs('daemons/controller/main.ts', 'bundled'))];
    print(
      `[controller] ${settings.BENCH_VMS} VMs, ${settings.BENCH_CONCURRENCY} creates in flight, ${settings.BENCH_WORKERS} workers${settings.BENCH_WORKERS === SHIPPED_WORKERS ? ' (shipped default)' : ' (NOT the shipped default)'}, ${settings.BENCH_ROUNDS} round(s), ` +
        (settings.BENCH_WEBHOOK ? 'VM creates through the defaulting webhook' : 'no webhook'),
    );
    const variants = ['vms', 'all', 'controller'] as const;
    const [vms = [], all = [], ctl = []] = await interleaved(variants, settings.BENCH_ROUNDS, (v) =>
      v === 'vms' ? bareVMs(c, world) : v === 'all' ? bareAll(c, world) : withController(c, world, args, kube),
    );
    const n = settings.BENCH_VMS;
    const row = (name: string, runs: number[], note: string): Measurement => {
      const ms = medianBy(runs, (x) => x);
      return { name, values: { seconds: ms / 1000, perSecond: n / (ms / 1000) }, note };
    };
    const columns = [
      { key: 'seconds', label: 'seconds', digits: 2, ratio: true },
      { key: 'perSecond', label: 'VMs/s', digits: 0 },
    ];
    const controller = row('controller', ctl, `${n} VM creates; the controller makes and writes the rest`);
    const title = `${n} VirtualMachines to internal objects and status`;
    printComparison(`${title}, against bare VM creates`, columns, [row('bare VM creates', vms, `${n} creates`), controller], 'bare VM creates');
    printComparison(
      `${title}, against bare creates of every object`,
      columns,
      [row('bare creates of all objects', all, `${4 * n} creates: VM, internal VM, VMIP, lease`), controller],
      'bare creates of all objects',
    );
    const total = lastRequests.writes.reduce((sum, [, perVm]) => sum + perVm, 0);
    print(`[controller] writes per converged VM (last run, apiserver counters, the bench's own VM creates taken out): ${total.toFixed(2)}`);
    for (const [key, perVm] of lastRequests.writes) print(`  ${perVm.toFixed(2).padStart(6)}  ${key}`);
    print(
      `[controller] reads per converged VM (every client's): ${lastRequests.reads.map(([key, perVm]) => `${key} ${perVm.toFixed(3)}`).join(', ') || 'none'}`,
    );
    if (lastMemory !== undefined) {
      print(
        `[controller] controller RSS (last run): ${lastMemory.idle.toFixed(0)} MB with caches synced, peak ${lastMemory.peak.toFixed(0)} MB (VmHWM) at convergence`,
      );
    }
    const cpuRatio = printCpu(n);
    printLogs(n);
    const reconciles = lastReconciles.reduce((sum, [, perVm]) => sum + perVm, 0);
    print(
      `[controller] reconciles per VM (last run, by controller and result): ${reconciles.toFixed(2)}: ${lastReconciles.map(([key, perVm]) => `${key} ${perVm.toFixed(2)}`).join(', ')}`,
    );
    print(
      `[controller] work queues (last run): mean wait before a reconcile / mean reconcile, ms: ${lastQueues.map(([name, q]) => `${name} ${q.waitMs.toFixed(1)} / ${q.workMs.toFixed(1)}`).join(', ')}`,
    );
    if (settings.BENCH_APISERVER_PROFILE > 0) await printApiserverProfile();
    if (settings.BENCH_PROFILE) print(formatProfile('CPU profile of the controller (last run, its whole life)', summarizeProfileDir(CONTROLLER_PROFILES, 30)));
    recordResult('controller', [
      codeCell(),
      total.toFixed(2),
      `${(medianBy(ctl, (x) => x) / medianBy(vms, (x) => x)).toFixed(2)}x (${settings.BENCH_VMS.toLocaleString('en-US')} VMs, median of ${settings.BENCH_ROUNDS})`,
      cpuRatio === undefined ? '-' : `${cpuRatio.toFixed(2)}x`,
      lastMemory === undefined ? '-' : `${lastMemory.peak.toFixed(0)} MB (idle ${lastMemory.idle.toFixed(0)} MB)`,
    ]);
  } finally {
    await webhook?.stop();
    kube.close();
    await cp.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
