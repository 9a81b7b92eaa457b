import { describe, expect, it } from '@jest/globals';
import { Store, type InformerHandlers, type KubeClient, type KubeObject } from '../../shared/kube/index.js';
import { ModuleConfigCidrs } from '../../shared/kube/module-config-cidrs.js';
import { pino } from 'pino';
import { waitFor } from '../../shared/testing/wait.js';
import { assemble, type Base, type MakeRunner } from './assemble.js';
import { loadConfig } from './config.js';
import type { Features, ReconcilerDeclaration, Wiring } from './declaration.js';
import type { Caches, Deps } from './deps.js';
import { ObjectCache, type CacheSource } from './engine/cache.js';
import { ReadyPort } from './engine/ready-port.js';
import { Runner } from './engine/runner.js';
import type { Clients } from './kube/resources.js';

/** A cache whose informer is driven by hand: its events, when it syncs, whether it was started or stopped. */
class HandCache {
  readonly handlers = new Map<string, ((obj: KubeObject, old?: KubeObject) => void)[]>();
  started = false;
  stopped = false;
  sync: () => void = () => undefined;
  fail: (err: Error) => void = () => undefined;
  readonly cache: ObjectCache<KubeObject>;

  constructor() {
    const synced = new Promise<void>((resolve, reject) => {
      this.sync = resolve;
      this.fail = reject;
    });
    synced.catch(() => undefined);
    const source = {
      store: new Store<KubeObject>(),
      synced,
      on: (event: string, handler: InformerHandlers<KubeObject>['add']) => {
        this.handlers.set(event, [...(this.handlers.get(event) ?? []), handler]);
        return () => undefined;
      },
      start: () => void (this.started = true),
      stop: async () => {
        this.stopped = true;
        this.fail(new Error('informer stopped'));
        await Promise.resolve();
      },
    } as unknown as CacheSource<KubeObject>;
    this.cache = new ObjectCache(source);
  }

  add(name: string): void {
    for (const h of this.handlers.get('add') ?? []) h({ metadata: { name, resourceVersion: '1' } });
  }
}

const CORE = ['vms', 'classes', 'disks', 'images', 'clusterImages', 'kvvms', 'kvvmis', 'migrations', 'vmops', 'vmips', 'leases', 'nodes'] as const;

function world(features: Partial<Features> = {}) {
  const abort = new AbortController();
  const core = Object.fromEntries(CORE.map((k) => [k, new HandCache()])) as Record<(typeof CORE)[number], HandCache>;
  const caches = Object.fromEntries(CORE.map((k) => [k, core[k].cache])) as unknown as Caches;
  const config = loadConfig({ LOG_LEVEL: 'silent', RECONCILE_WORKERS: '4' });
  const cidrs = new ModuleConfigCidrs([]);
  let depsBuilt = 0;
  const base: Base = {
    kube: {} as KubeClient,
    config,
    signal: abort.signal,
    log: pino({ level: 'silent' }),
    features: { storage: false, volumeSnapshots: false, usb: false, kubevirtConfig: false, ...features },
    ports: {},
    clients: {} as Clients,
    caches,
    cidrs,
    deps: () => {
      depsBuilt++;
      return { caches, config, cidrs, usb: new ReadyPort() } as unknown as Deps;
    },
  };
  const reconciled: string[] = [];
  const workers = new Map<string, number>();
  const makeRunner: MakeRunner = (name, reconcile, count) => {
    workers.set(name, count);
    return new Runner({ name, workers: count, reconcile, signal: abort.signal });
  };
  const syncCore = (): void => CORE.forEach((k) => core[k].sync());
  return { abort, core, base, reconciled, workers, makeRunner, syncCore, depsBuilt: () => depsBuilt };
}

/** A declaration whose reconcile records `name:key` and whose source is the add events of `from`. */
function declaration(name: string, from: HandCache, more: Partial<ReconcilerDeclaration> & { into: string[] }): ReconcilerDeclaration {
  const { into, ...rest } = more;
  return {
    name,
    workers: (c) => c.RECONCILE_WORKERS,
    reconcile: () => (key) => {
      into.push(`${name}:${key}`);
      return Promise.resolve();
    },
    sources: (_w, enqueue) => void from.handlers.set('add', [...(from.handlers.get('add') ?? []), (o: KubeObject) => enqueue(o.metadata.name ?? '')]),
    ...rest,
  };
}

describe('assemble: a controller from reconciler declarations', () => {
  it('wakes a reconciler through its own sources, but only once the core caches and the ones it needs have synced', async () => {
    const t = world();
    const extra = new HandCache();
    const a = declaration('a', extra, { into: t.reconciled, caches: () => [extra.cache] });
    const assembly = assemble([a], t.base, t.makeRunner);
    expect(t.workers.get('a')).toBe(4);
    const starting = assembly.start();
    expect(extra.started).toBe(true);
    expect(Object.values(t.core).every((c) => c.started)).toBe(true);
    extra.add('x');
    t.syncCore();
    // The core synced, the cache it needs not: the key waits in the queue.
    await Promise.resolve();
    expect(t.reconciled).toEqual([]);
    expect(assembly.runners.get('a')?.queue.holds('x')).toBe(true);
    extra.sync();
    await starting;
    await waitFor('a reconciled x', () => t.reconciled.includes('a:x'));
    await assembly.stop();
    expect(extra.stopped).toBe(true);
  });

  it('starts a late reconciler on its own time: start() does not wait for its caches, everyRunning does', async () => {
    const t = world();
    const own = new HandCache();
    const late = declaration('late', own, { into: t.reconciled, late: true, caches: () => [own.cache] });
    const assembly = assemble([late], t.base, t.makeRunner);
    t.syncCore();
    await assembly.start();
    let running = false;
    void assembly.everyRunning.then(() => (running = true));
    own.add('k');
    await Promise.resolve();
    expect(running).toBe(false);
    expect(t.reconciled).toEqual([]);
    own.sync();
    await assembly.everyRunning;
    await waitFor('late reconciled k', () => t.reconciled.includes('late:k'));
    await assembly.stop();
  });

  it('never starts a late reconciler stopped before its caches synced, and everyRunning says so', async () => {
    const t = world();
    const own = new HandCache();
    const assembly = assemble([declaration('late', own, { into: t.reconciled, late: true, caches: () => [own.cache] })], t.base, t.makeRunner);
    t.syncCore();
    await assembly.start();
    own.add('k');
    t.abort.abort();
    await assembly.stop();
    await expect(assembly.everyRunning).rejects.toThrow(/stopped/);
    expect(t.reconciled).toEqual([]);
  });

  it('builds nothing of a disabled declaration', () => {
    const t = world({ usb: false });
    let built = 0;
    const off: ReconcilerDeclaration = {
      name: 'off',
      workers: () => 1,
      enabled: (f) => f.usb,
      reconcile: () => {
        built++;
        return () => Promise.resolve();
      },
      sources: () => void built++,
    };
    const assembly = assemble([off], t.base, t.makeRunner);
    expect([...assembly.runners.keys()]).toEqual([]);
    expect(built).toBe(0);
  });

  it('builds a shared part (and the deps) once for every declaration that asks', () => {
    const t = world();
    let parts = 0;
    const part = (w: Wiring): { id: number; deps: Deps } => ({ id: ++parts, deps: w.deps });
    const seen: number[] = [];
    const asking = (name: string): ReconcilerDeclaration => ({
      name,
      workers: () => 1,
      reconcile: (w) => {
        seen.push(w.shared(part).id);
        return () => Promise.resolve();
      },
      sources: (w) => void seen.push(w.shared(part).id),
    });
    assemble([asking('one'), asking('two')], t.base, t.makeRunner);
    expect(seen).toEqual([1, 1, 1, 1]);
    expect(parts).toBe(1);
    expect(t.depsBuilt()).toBe(1);
  });

  it('refuses two declarations of one name, naming it', () => {
    const t = world();
    const c = new HandCache();
    expect(() => assemble([declaration('vm', c, { into: [] }), declaration('vm', c, { into: [] })], t.base, t.makeRunner)).toThrow(
      "two reconciler declarations are named 'vm'",
    );
  });
});
