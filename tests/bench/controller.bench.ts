/**
 * Controller benchmark: how long 1,000 VirtualMachines take to reach their expected internal objects
 * and status (internal VM built, address leased and attached, phase Stopped with the IP) with the
 * controller running as it ships (compiled, its own process, leader election off), as a ratio to the
 * time the same apiserver takes for bare creates, sent with the same client concurrency: of the 1,000
 * VirtualMachines alone, and of every object of the converged state (each VM, its internal VM, its
 * VirtualMachineIPAddress and its lease). Target (issue 6): under 1.5x.
 *
 * Knobs: BENCH_VMS, BENCH_CONCURRENCY, BENCH_WORKERS, BENCH_ROUNDS.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { Informer, KubeClient, type KubeObject } from '../../shared/kube/index.js';
import { startNodeProcess } from '../../shared/runtime/testing/index.js';
import { makeClients, type Clients } from '../../daemons/controller/kube/resources.js';
import { ensureBinaries } from '../env/binaries.js';
import { startControlPlane } from '../env/control-plane.js';
import { installCrds } from '../env/crds.js';
import { newKubeConfig } from '../env/index.js';
import { baselineObjects, prepareWorld, vmObject, type World } from '../integration/controller/bench-objects.js';
import { interleaved, knobs, medianBy, nowMs, print, printComparison, type Measurement } from './lib.js';
import { compiledArgs } from './processes.js';

const settings = knobs(
  z.object({
    BENCH_VMS: env.int(1_000, 1).describe('VirtualMachines per run'),
    BENCH_CONCURRENCY: env.int(32, 1).describe('Creates in flight from the client (both rows)'),
    BENCH_WORKERS: env.int(16, 1).describe('RECONCILE_WORKERS of the controller'),
    BENCH_ROUNDS: env.int(1, 1).describe('Runs per row, interleaved; the median run is reported'),
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
async function withController(c: Clients, world: World, args: readonly string[]): Promise<number> {
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
    const start = nowMs();
    await pool(
      Array.from({ length: settings.BENCH_VMS }, (_, i) => () => c.vms.create(vmObject(world, ns, i))),
      settings.BENCH_CONCURRENCY,
    );
    await converged.done;
    const ms = nowMs() - start;
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
  try {
    await installCrds(cp.state);
    const c = makeClients(kube, 'bench');
    const world = await prepareWorld(c, cp.state.kubeconfigPath);
    const args = await compiledArgs('daemons/controller/main.ts');
    print(
      `[controller] ${settings.BENCH_VMS} VMs, ${settings.BENCH_CONCURRENCY} creates in flight, ${settings.BENCH_WORKERS} workers, ${settings.BENCH_ROUNDS} round(s)`,
    );
    const variants = ['vms', 'all', 'controller'] as const;
    const [vms = [], all = [], ctl = []] = await interleaved(variants, settings.BENCH_ROUNDS, (v) =>
      v === 'vms' ? bareVMs(c, world) : v === 'all' ? bareAll(c, world) : withController(c, world, args),
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
  } finally {
    kube.close();
    await cp.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
