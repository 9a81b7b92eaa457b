/**
 * The controller under benchmark (controller.bench.ts, controller-scale.bench.ts): its counters from
 * its /metrics, and a watch that says when every VM of a namespace has converged.
 */
import type { VirtualMachine } from '../../shared/api/resources/virtualmachine.js';
import { Informer, type KubeObject } from '../../shared/kube/index.js';
import type { Clients } from '../../daemons/controller/kube/resources.js';

const QUEUE_SERIES = /^workqueue_(queue|work)_duration_seconds_(sum|count)$/;
/** The process's memory series (bytes) by the key they get. */
const MEMORY_SERIES: Readonly<Record<string, string>> = {
  nodejs_heap_size_total_bytes: 'heap total',
  nodejs_heap_size_used_bytes: 'heap used',
  nodejs_external_memory_bytes: 'external',
};

/**
 * The controller's counters from its /metrics: `reconcile <controller> <result>` → count,
 * `<queue|work> <sum|count> <controller>` → the work queue's duration histograms' sums and counts,
 * `depth <controller>` → the work queue's depth now, and `heap total`, `heap used`, `external` → V8's
 * heap committed and in use and memory held outside it (Buffers), bytes.
 */
export async function controllerCounters(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(url)).text();
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const name = line.includes('{') ? line.slice(0, line.indexOf('{')) : line.slice(0, line.indexOf(' '));
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (name === 'd8_virtualization_controller_reconcile_total') counts.set(`reconcile ${labels['controller']} ${labels['result']}`, value);
    if (name === 'workqueue_depth') counts.set(`depth ${labels['name']}`, value);
    const memory = MEMORY_SERIES[name];
    if (memory !== undefined) counts.set(memory, value);
    const series = QUEUE_SERIES.exec(name);
    if (series !== null) counts.set(`${series[1]} ${series[2]} ${labels['name']}`, value);
  }
  return counts;
}

/** Reconciles between two counter readings by controller and result, `controller result` → count, the most first. */
export function reconcileCounts(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): Array<[string, number]> {
  return [...after]
    .filter(([key]) => key.startsWith('reconcile '))
    .map(([key, value]): [string, number] => [key.slice('reconcile '.length), value - (before.get(key) ?? 0)])
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** Per controller whose queue moved between two counter readings: the mean ms a key waited in it, and the mean ms of a reconcile. */
export function queueMeans(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): Array<[string, { waitMs: number; workMs: number }]> {
  const delta = (key: string): number => (after.get(key) ?? 0) - (before.get(key) ?? 0);
  const mean = (kind: string, name: string): number => (1000 * delta(`${kind} sum ${name}`)) / delta(`${kind} count ${name}`);
  return [...after.keys()]
    .filter((key) => key.startsWith('queue count ') && delta(key) > 0)
    .map((key) => key.slice('queue count '.length))
    .map((name): [string, { waitMs: number; workMs: number }] => [name, { waitMs: mean('queue', name), workMs: mean('work', name) }]);
}

export interface Convergence {
  /** Both watches listed. */
  readonly synced: Promise<void>;
  /** Resolves once `count` VMs are ready and each has its internal VM. */
  readonly done: Promise<void>;
  /** VMs ready so far. */
  ready(): number;
  stop(): Promise<void>;
}

/** Watch the VMs of `ns` and their internal VMs until `count` VMs pass `isReady` and each has its internal VM. */
export function watchConvergence(c: Clients, ns: string, count: number, isReady: (vm: VirtualMachine) => boolean): Convergence {
  const ready = new Set<string>();
  const kvvms = new Set<string>();
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const check = (): void => {
    if (ready.size >= count && [...ready].every((n) => kvvms.has(n))) finish();
  };
  const vmInf = new Informer({ client: c.vms, namespace: ns });
  const kvvmInf = new Informer({ client: c.kvvms, namespace: ns });
  const onVM = (vm: VirtualMachine): void => {
    if (isReady(vm)) ready.add(vm.metadata.name ?? '');
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
    ready: () => ready.size,
    stop: async () => {
      await vmInf.stop();
      await kvvmInf.stop();
    },
  };
}
