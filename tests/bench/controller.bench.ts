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
 * Knobs: BENCH_VMS, BENCH_CONCURRENCY, BENCH_WORKERS, BENCH_ROUNDS, BENCH_WEBHOOK.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { Informer, KubeClient, type KubeObject } from '../../shared/kube/index.js';
import { Finalizer } from '../../shared/api/finalizers.js';
import { listeningPort, startNodeProcess } from '../../shared/runtime/testing/index.js';
import { waitFor } from '../../shared/testing/wait.js';
import { makeClients, type Clients } from '../../daemons/controller/kube/resources.js';
import { ensureBinaries } from '../env/binaries.js';
import { startControlPlane, type ControlPlaneState } from '../env/control-plane.js';
import { installCrds } from '../env/crds.js';
import { createCA, issueCert, newKubeConfig } from '../env/index.js';
import { runKubectl } from '../env/kubectl.js';
import { localWebhookConfigurations } from '../integration/admission/configurations.js';
import { baselineObjects, prepareWorld, vmObject, type World } from '../integration/controller/bench-objects.js';
import { interleaved, knobs, medianBy, nowMs, print, printComparison, processMemoryMb, type Measurement } from './lib.js';
import { bundledArgs } from './processes.js';

const settings = knobs(
  z.object({
    BENCH_VMS: env.int(1_000, 1).describe('VirtualMachines per run'),
    BENCH_CONCURRENCY: env.int(32, 1).describe('Creates in flight from the client (both rows)'),
    BENCH_WORKERS: env.int(16, 1).describe('RECONCILE_WORKERS of the controller'),
    BENCH_ROUNDS: env.int(1, 1).describe('Runs per row, interleaved; the median run is reported'),
    BENCH_WEBHOOK: env.bool(true).describe('VM creates go through the defaulting webhook, as deployed'),
  }),
);

/** Run `tasks` with at most `limit` in flight. */
async function pool(tasks: readonly (() => Promise<unknown>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) await tasks[next++]?.();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}

let round = 0;

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY']);

/** The apiserver's write counters, `VERB resource[/subresource]` → count, from its /metrics. */
async function apiserverWrites(kube: KubeClient): Promise<Map<string, number>> {
  const res = await kube.rest.stream({ method: 'GET', path: '/metrics', what: 'read the apiserver metrics' });
  let text = '';
  for await (const chunk of res) text += String(chunk);
  const writes = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (!WRITE_VERBS.has(labels['verb'] ?? '')) continue;
    const key = `${labels['verb']} ${labels['resource']}${labels['subresource'] ? `/${labels['subresource']}` : ''}`;
    writes.set(key, (writes.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return writes;
}

/** Writes per converged VM between two counter readings, minus the bench's own `own` VM creates. */
function writesPerVm(before: Map<string, number>, after: Map<string, number>, vms: number): Array<[string, number]> {
  const rows: Array<[string, number]> = [];
  for (const [key, count] of after) {
    const own = key === 'POST virtualmachines' ? vms : 0;
    const delta = count - (before.get(key) ?? 0) - own;
    if (delta > 0) rows.push([key, delta / vms]);
  }
  return rows.sort((a, b) => b[1] - a[1]);
}

let lastWrites: Array<[string, number]> = [];
/** The controller's resident memory in the last run: after its caches synced, and its peak at convergence. */
let lastMemory: { idle: number; peak: number } | undefined;

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
  const stop = async (): Promise<void> => {
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
  const start = nowMs();
  await pool(tasks, settings.BENCH_CONCURRENCY);
  return nowMs() - start;
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
    },
  });
  try {
    await proc.waitForLog((r) => r['msg'] === 'caches synced, reconcilers running', 60_000);
    const converged = watchConvergence(c, ns);
    await converged.synced;
    const before = await apiserverWrites(kube);
    const idle = processMemoryMb(proc.child.pid ?? 0).rss;
    const start = nowMs();
    await pool(
      Array.from({ length: settings.BENCH_VMS }, (_, i) => () => c.vms.create(vmObject(world, ns, i))),
      settings.BENCH_CONCURRENCY,
    );
    await converged.done;
    const ms = nowMs() - start;
    lastMemory = { idle, peak: processMemoryMb(proc.child.pid ?? 0).peak };
    lastWrites = writesPerVm(before, await apiserverWrites(kube), settings.BENCH_VMS);
    await converged.stop();
    return ms;
  } finally {
    proc.child.kill('SIGTERM');
    await proc.exited;
  }
}

/** Resolves `done` once every VM is Stopped with its IP and its internal VM exists. */
function watchConvergence(c: Clients, ns: string): { synced: Promise<void>; done: Promise<void>; stop: () => Promise<void> } {
  const ready = new Set<string>();
  const kvvms = new Set<string>();
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const check = (): void => {
    if (ready.size >= settings.BENCH_VMS && [...ready].every((n) => kvvms.has(n))) finish();
  };
  const vmInf = new Informer({ client: c.vms, namespace: ns });
  const kvvmInf = new Informer({ client: c.kvvms, namespace: ns });
  const onVM = (vm: { metadata: { name?: string }; status?: { phase?: string; ipAddress?: string } }): void => {
    if (vm.status?.phase === 'Stopped' && vm.status.ipAddress !== undefined) ready.add(vm.metadata.name ?? '');
    check();
  };
  const onKvvm = (k: KubeObject): void => {
    kvvms.add(k.metadata.name ?? '');
    check();
  };
  vmInf.on('add', onVM);
  vmInf.on('update', onVM);
  kvvmInf.on('add', onKvvm);
  vmInf.start();
  kvvmInf.start();
  return {
    synced: Promise.all([vmInf.synced, kvvmInf.synced]).then(() => undefined),
    done,
    stop: async () => {
      await vmInf.stop();
      await kvvmInf.stop();
    },
  };
}

async function main(): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), 'bench-controller-'));
  const cp = await startControlPlane(await ensureBinaries(), workDir);
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
    const args = await bundledArgs('daemons/controller/main.ts', 'bundled');
    print(
      `[controller] ${settings.BENCH_VMS} VMs, ${settings.BENCH_CONCURRENCY} creates in flight, ${settings.BENCH_WORKERS} workers, ${settings.BENCH_ROUNDS} round(s), ` +
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
    const total = lastWrites.reduce((sum, [, perVm]) => sum + perVm, 0);
    print(`[controller] writes per converged VM (last run, apiserver counters, the bench's own VM creates taken out): ${total.toFixed(2)}`);
    for (const [key, perVm] of lastWrites) print(`  ${perVm.toFixed(2).padStart(6)}  ${key}`);
    if (lastMemory !== undefined) {
      print(
        `[controller] controller RSS (last run): ${lastMemory.idle.toFixed(0)} MB with caches synced, peak ${lastMemory.peak.toFixed(0)} MB (VmHWM) at convergence`,
      );
    }
  } finally {
    await webhook?.stop();
    kube.close();
    await cp.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
