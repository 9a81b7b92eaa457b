/**
 * Builds a controller from the reconciler declarations: the wiring they share, one runner each, their
 * event sources, and the order things start (caches, then runners; `late` ones once their own caches
 * sync) and stop (runners, then caches).
 */
import type { KubeObject, ResourceClient } from '../../shared/kube/index.js';
import { allCaches, informerCache, type Scope } from './caches.js';
import type { ReconcilerDeclaration, Wiring } from './declaration.js';
import type { Deps } from './deps.js';
import type { ObjectCache } from './engine/cache.js';
import type { ReconcileFn, Runner } from './engine/runner.js';

/** What the wiring is made of before any declaration is built; `deps` is built once, on first use. */
export type Base = Omit<Wiring, 'deps' | 'shared' | 'informer'> & { readonly deps: (w: Wiring) => Deps };

/** Makes a named runner (the controller's: its metrics and shutdown cover it). */
export type MakeRunner = (name: string, reconcile: ReconcileFn, workers: number) => Runner;

export interface Assembly {
  /** The runner of each enabled declaration, by name. */
  readonly runners: ReadonlyMap<string, Runner>;
  /** Every cache: the core ones and those the declarations asked for. */
  readonly caches: readonly ObjectCache<KubeObject>[];
  /** Start every cache; resolves once the core caches and those of every declaration not `late` synced and their runners run. */
  start(): Promise<void>;
  /** Resolves once every runner runs, the `late` ones too (after start()); rejects when stopped before. */
  readonly everyRunning: Promise<void>;
  /** Stop the runners, then the caches. */
  stop(): Promise<void>;
}

export function assemble(declarations: readonly ReconcilerDeclaration[], base: Base, makeRunner: MakeRunner): Assembly {
  const seen = new Set<string>();
  for (const d of declarations) {
    if (seen.has(d.name)) throw new Error(`two reconciler declarations are named '${d.name}'`);
    seen.add(d.name);
  }
  const extra: ObjectCache<KubeObject>[] = [];
  const built = new Map<(w: Wiring) => unknown, unknown>();
  const w: Wiring = {
    ...base,
    get deps(): Deps {
      return w.shared(base.deps);
    },
    shared<T>(build: (w: Wiring) => T): T {
      if (!built.has(build)) built.set(build, build(w));
      return built.get(build) as T;
    },
    informer<T extends KubeObject>(client: ResourceClient<T>, scope: Scope, transform?: (obj: T) => T): ObjectCache<T> {
      const cache = informerCache(client, scope, base.signal, base.log, transform);
      extra.push(cache as unknown as ObjectCache<KubeObject>);
      return cache;
    },
  };
  const enabled = declarations.filter((d) => d.enabled?.(base.features) ?? true);
  const runners = new Map<string, Runner>();
  const needs = new Map<ReconcilerDeclaration, readonly ObjectCache<KubeObject>[]>();
  for (const d of enabled) {
    const runner = makeRunner(d.name, d.reconcile(w), d.workers(base.config));
    runners.set(d.name, runner);
    needs.set(d, d.caches?.(w) ?? []);
    d.sources(w, (key) => runner.enqueue(key));
  }
  const core = allCaches(base.caches);
  // The ones made through `informer` and any a declaration lists, each once.
  const caches = [...new Set([...core, ...extra, ...[...needs.values()].flat()])];
  const running = (d: ReconcilerDeclaration): Runner => runners.get(d.name) as Runner;
  let lateStarted: (late: Promise<void>) => void = () => undefined;
  let startedLate = false;
  const everyRunning = new Promise<Promise<void>>((resolve) => (lateStarted = resolve)).then((late) => late);
  everyRunning.catch(() => undefined);
  return {
    runners,
    caches,
    everyRunning,
    async start() {
      for (const c of caches) c.informer.start();
      const first = enabled.filter((d) => d.late !== true);
      await Promise.all([...core, ...first.flatMap((d) => needs.get(d) ?? [])].map((c) => c.synced));
      for (const d of first) running(d).start();
      // Late ones on their own time: a stop before their caches synced rejects `synced`, and nothing starts.
      const late = enabled
        .filter((d) => d.late === true)
        .map(async (d) => {
          await Promise.all((needs.get(d) ?? []).map((c) => c.synced));
          if (base.signal.aborted) throw new Error(`stopped before reconciler '${d.name}' started`);
          running(d).start();
        });
      startedLate = true;
      lateStarted(Promise.all(late).then(() => undefined));
    },
    async stop() {
      if (!startedLate) lateStarted(Promise.reject(new Error('stopped before every reconciler started')));
      await Promise.all([...runners.values()].map((r) => r.stop()));
      await Promise.all(caches.map((c) => c.informer.stop()));
    },
  };
}
