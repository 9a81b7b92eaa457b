/**
 * The controller under benchmark (controller.bench.ts, controller-scale.bench.ts): its counters from
 * its /metrics, and a watch that says when every VM of a namespace has converged.
 */
import type { VirtualMachine } from '../../shared/api/resources/virtualmachine.js';
import { Informer, type KubeObject } from '../../shared/kube/index.js';
import type { Clients } from '../../daemons/controller/kube/resources.js';

const QUEUE_SERIES = /^workqueue_(queue|work)_duration_seconds_(sum|count)$/;

/**
 * The controller's counters from its /metrics: `reconcile <controller> <result>` → count,
 * `<queue|work> <sum|count> <controller>` → the work queue's duration histograms' sums and counts, and
 * `depth <controller>` → the work queue's depth now.
 */
export async function controllerCounters(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(url)).text();
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const name = line.slice(0, line.indexOf('{'));
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (name === 'd8_virtualization_controller_reconcile_total') counts.set(`reconcile ${labels['controller']} ${labels['result']}`, value);
    if (name === 'workqueue_depth') counts.set(`depth ${labels['name']}`, value);
    const series = QUEUE_SERIES.exec(name);
    if (series !== null) counts.set(`${series[1]} ${series[2]} ${labels['name']}`, value);
  }
  return counts;
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
