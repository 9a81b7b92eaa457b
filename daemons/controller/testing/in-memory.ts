/**
 * In-memory kinds for unit tests of the controller's handlers. The handlers depend on ports
 * (ResourcePort, CachePort: see deps.ts); here one InMemoryKind plays the apiserver for one kind with
 * the semantics the handlers rely on, and feeds a real ObjectCache as a watch would. Integration tests
 * keep using the real apiserver; these exist so each handler can be tested on its own, table-driven.
 *
 * Semantics kept: create (AlreadyExists; generateName; uid, resourceVersion, creationTimestamp set),
 * get (NotFound), merge patch and JSON patch (a resourceVersion in a merge patch is a precondition,
 * a failed `test` is 422), /status writes touch only status, delete (with finalizers: only a
 * deletionTimestamp; the object goes when the last finalizer is removed). Every write bumps the
 * resourceVersion and is delivered to the cache synchronously. Every call is recorded in `calls`.
 */
import { AlreadyExistsError, ConflictError, KubeApiError, NotFoundError } from '../../../shared/errors/index.js';
import {
  PatchTestFailedError,
  Store,
  applyJsonPatch,
  applyMergePatch,
  objectKey,
  type EventInput,
  type InformerHandlers,
  type JsonPatchOp,
  type KubeObject,
  type ListResult,
  type ObjectRef,
  type PatchOptions,
  type ResourcePort,
  type WriteOptions,
} from '../../../shared/kube/index.js';
import { rootLogger } from '../../../shared/log/index.js';
import { loadConfig, type ControllerConfig } from '../config.js';
import { addIndexes } from '../caches.js';
import type { Caches, Deps, KubeVirtConfigPort, VmUsbPort } from '../deps.js';
import { ObjectCache, type CacheSource } from '../engine/cache.js';
import type { HandlerContext } from '../engine/reconciler.js';
import { ReadyPort } from '../engine/ready-port.js';
import type { Clients } from '../kube/resources.js';

export type Verb = 'create' | 'replace' | 'mergePatch' | 'jsonPatch' | 'apply' | 'patchStatus' | 'delete';

/** One write a handler made, as the apiserver received it. */
export interface RecordedCall {
  verb: Verb;
  key: string;
  body?: unknown;
}

type Handlers<T> = { [E in keyof InformerHandlers<T>]: InformerHandlers<T>[E][] };

/**
 * An informer stand-in whose store and events a test (or an InMemoryKind) moves by hand, as a watch
 * would: `add`, `update`, `remove` change the store and call the handlers.
 */
export class ManualSource<T extends KubeObject> {
  readonly store = new Store<T>();
  private readonly handlers: Handlers<T> = { add: [], update: [], delete: [], invalid: [] };

  readonly source: CacheSource<T> = {
    store: this.store,
    synced: Promise.resolve(),
    on: ((event: keyof Handlers<T>, handler: never) => {
      (this.handlers[event] as unknown[]).push(handler);
      return () => undefined;
    }) as CacheSource<T>['on'],
    start() {
      return this;
    },
    stop: () => Promise.resolve(),
  } as unknown as CacheSource<T>;

  add(obj: T): void {
    this.store.set(obj);
    for (const h of this.handlers.add) void h(obj);
  }

  update(obj: T): void {
    const old = this.store.set(obj) ?? obj;
    for (const h of this.handlers.update) void h(obj, old);
  }

  remove(obj: T): void {
    this.store.delete(objectKey(obj.metadata));
    for (const h of this.handlers.delete) void h(obj);
  }
}

let uidCounter = 0;

/** One kind in memory: the apiserver's side (ResourcePort) and the cache a reconciler reads. */
export class InMemoryKind<T extends KubeObject> implements ResourcePort<T> {
  readonly calls: RecordedCall[] = [];
  readonly cache: ObjectCache<T>;
  private readonly watch = new ManualSource<T>();
  private readonly objects = new Map<string, T>();
  private version = 100;
  /** The next write fails with this (once), e.g. an UnavailableError to test the failure path. */
  failNext: Error | undefined;

  constructor(readonly kind: string) {
    this.cache = new ObjectCache(this.watch.source);
  }

  /** Objects that exist before the test starts (uid and resourceVersion filled in when missing). */
  seed(objects: readonly T[]): void {
    for (const obj of objects) this.put(this.stamp(structuredClone(obj)), 'add');
  }

  /** What the apiserver holds for a key (not the cache's view). */
  stored(key: string): T | undefined {
    return this.objects.get(key);
  }

  /** The write calls of one verb. */
  callsOf(verb: Verb): RecordedCall[] {
    return this.calls.filter((c) => c.verb === verb);
  }

  /**
   * Someone else (a user, KubeVirt) writes: a merge patch without preconditions, delivered to the cache
   * unless `unseen` (its watch event still on the way: the cache keeps the older version).
   */
  writeByOther(key: string, patch: object, opts: { unseen?: boolean } = {}): T {
    const current = this.mustGet(key);
    const next = {
      ...(applyMergePatch(current, patch) as T),
      metadata: this.bump(applyMergePatch(current.metadata, (patch as { metadata?: object }).metadata ?? {}) as T['metadata']),
    };
    if (opts.unseen !== true) return this.put(next, 'update');
    this.objects.set(key, next);
    return next;
  }

  get(ref: ObjectRef): Promise<T> {
    return Promise.resolve(structuredClone(this.mustGet(keyOf(ref))));
  }

  list(): Promise<ListResult<T>> {
    return Promise.resolve({ items: [...this.objects.values()].map((o) => structuredClone(o)), resourceVersion: String(this.version) });
  }

  create(obj: T): Promise<T> {
    return this.write('create', obj.metadata.namespace, obj.metadata.name ?? obj.metadata.generateName ?? '', obj, () => {
      const named = obj.metadata.name ?? `${obj.metadata.generateName ?? ''}${(++uidCounter).toString(36).padStart(5, '0')}`;
      const key = objectKey({ namespace: obj.metadata.namespace, name: named });
      if (this.objects.has(key)) throw new AlreadyExistsError(`${this.kind} ${key} already exists`);
      return this.put(this.stamp({ ...structuredClone(obj), metadata: { ...structuredClone(obj.metadata), name: named } }), 'add');
    });
  }

  replace(obj: T): Promise<T> {
    return this.write('replace', obj.metadata.namespace, obj.metadata.name ?? '', obj, () => {
      const current = this.mustGet(objectKey(obj.metadata));
      this.precondition(current, obj.metadata.resourceVersion);
      return this.put(
        { ...structuredClone(obj), status: current['status' as keyof T], metadata: this.bump({ ...obj.metadata, uid: current.metadata.uid }) },
        'update',
      );
    });
  }

  mergePatch(ref: ObjectRef, patch: unknown, opts: PatchOptions = {}): Promise<T> {
    return this.write(opts.subresource === 'status' ? 'patchStatus' : 'mergePatch', ref.namespace, ref.name, patch, () => {
      const current = this.mustGet(keyOf(ref));
      const body = patch as { metadata?: { resourceVersion?: string }; status?: unknown };
      this.precondition(current, body.metadata?.resourceVersion);
      const { metadata, status, ...rest } = body;
      const next = (opts.subresource === 'status' ? applyMergePatch(current, { status }) : applyMergePatch(current, rest)) as T;
      const meta =
        opts.subresource === 'status' ? current.metadata : (applyMergePatch(current.metadata, { ...metadata, resourceVersion: null }) as T['metadata']);
      return this.settle({ ...next, metadata: this.bump(meta) });
    });
  }

  patchStatus(ref: ObjectRef, status: unknown, opts: WriteOptions = {}): Promise<T> {
    return this.mergePatch(ref, { status }, { ...opts, subresource: 'status' });
  }

  jsonPatch(ref: ObjectRef, ops: readonly JsonPatchOp[]): Promise<T> {
    return this.write('jsonPatch', ref.namespace, ref.name, ops, () => {
      const current = this.mustGet(keyOf(ref));
      let next: T;
      try {
        next = applyJsonPatch(current, ops) as T;
      } catch (err) {
        if (err instanceof PatchTestFailedError) throw new KubeApiError(`${this.kind} ${keyOf(ref)}: ${err.message}`, 422, 'Invalid');
        throw err;
      }
      return this.settle({ ...next, metadata: this.bump(next.metadata) });
    });
  }

  apply(obj: KubeObject): Promise<T> {
    return this.write('apply', obj.metadata.namespace, obj.metadata.name ?? '', obj, () => {
      const key = objectKey(obj.metadata);
      const current = this.objects.get(key);
      if (current === undefined) return this.put(this.stamp(structuredClone(obj) as T), 'add');
      return this.settle({ ...(applyMergePatch(current, obj) as T), metadata: this.bump(applyMergePatch(current.metadata, obj.metadata) as T['metadata']) });
    });
  }

  delete(ref: ObjectRef): Promise<void> {
    return this.write('delete', ref.namespace, ref.name, undefined, () => {
      const current = this.mustGet(keyOf(ref));
      if ((current.metadata.finalizers ?? []).length === 0) return this.drop(current);
      if (current.metadata.deletionTimestamp !== undefined) return current;
      return this.put({ ...current, metadata: this.bump({ ...current.metadata, deletionTimestamp: new Date().toISOString() }) }, 'update');
    }).then(() => undefined);
  }

  private write(verb: Verb, namespace: string | undefined, name: string, body: unknown, run: () => T): Promise<T> {
    this.calls.push({ verb, key: objectKey({ namespace, name }), ...(body !== undefined ? { body: structuredClone(body) } : {}) });
    const failure = this.failNext;
    this.failNext = undefined;
    if (failure !== undefined) return Promise.reject(failure);
    try {
      return Promise.resolve(structuredClone(run()));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private mustGet(key: string): T {
    const found = this.objects.get(key);
    if (found === undefined) throw new NotFoundError(`${this.kind} ${key} not found`);
    return found;
  }

  private precondition(current: T, resourceVersion: string | undefined): void {
    if (resourceVersion !== undefined && resourceVersion !== current.metadata.resourceVersion) {
      throw new ConflictError(
        `${this.kind} ${objectKey(current.metadata)}: the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
  }

  /** A deleting object whose last finalizer went is removed, as the apiserver does. */
  private settle(next: T): T {
    if (next.metadata.deletionTimestamp !== undefined && (next.metadata.finalizers ?? []).length === 0) return this.drop(next);
    return this.put(next, 'update');
  }

  private stamp(obj: T): T {
    return { ...obj, metadata: this.bump({ uid: `uid-${++uidCounter}`, creationTimestamp: new Date().toISOString(), ...obj.metadata }) };
  }

  private bump(meta: T['metadata']): T['metadata'] {
    return { ...meta, resourceVersion: String(++this.version) };
  }

  private put(obj: T, event: 'add' | 'update'): T {
    this.objects.set(objectKey(obj.metadata), obj);
    if (event === 'add') this.watch.add(structuredClone(obj));
    else this.watch.update(structuredClone(obj));
    return obj;
  }

  private drop(obj: T): T {
    this.objects.delete(objectKey(obj.metadata));
    this.watch.remove(structuredClone(obj));
    return obj;
  }
}

function keyOf(ref: ObjectRef): string {
  return objectKey(ref);
}

type KindsOf = { [K in keyof Clients]: Clients[K] extends ResourcePort<infer T> ? InMemoryKind<T> : never };

export interface InMemoryDepsOptions {
  /** Seed objects per kind. */
  seed?: { [K in keyof KindsOf]?: KindsOf[K] extends InMemoryKind<infer T> ? readonly T[] : never };
  /** Controller settings as environment variables (defaults otherwise). */
  env?: Record<string, string>;
  /** The VM subnets (IPAM on when non-empty). */
  cidrs?: readonly string[];
  /** KubeVirt's configuration as the VMs see it (nothing missing by default). */
  kubevirt?: KubeVirtConfigPort;
  /** The launcher's volume error by pod name (`LauncherPods.volumeError`; none by default). */
  volumeErrors?: Readonly<Record<string, string>>;
}

/** An event the handlers recorded (in-memory deps): the object's `namespace/name` and what was recorded. */
export type RecordedEvent = EventInput & { regarding: string };

/**
 * Deps for a unit test: every client and cache an in-memory kind (with the controller's own indexes),
 * the controller's default config, and a launcher that reports no guest event. `kinds` gives the test
 * the apiserver's side.
 */
export function inMemoryDeps(options: InMemoryDepsOptions = {}): { deps: Deps; kinds: KindsOf; config: ControllerConfig; events: RecordedEvent[] } {
  const names: Record<keyof Clients, string> = {
    vms: 'VirtualMachine',
    classes: 'VirtualMachineClass',
    disks: 'VirtualDisk',
    images: 'VirtualImage',
    clusterImages: 'ClusterVirtualImage',
    kvvms: 'InternalVirtualizationVirtualMachine',
    kvvmis: 'InternalVirtualizationVirtualMachineInstance',
    migrations: 'InternalVirtualizationVirtualMachineInstanceMigration',
    vmops: 'VirtualMachineOperation',
    vmips: 'VirtualMachineIPAddress',
    leases: 'VirtualMachineIPAddressLease',
    nodes: 'Node',
    pods: 'Pod',
    secrets: 'Secret',
    moduleConfigs: 'ModuleConfig',
  };
  const all = Object.entries(names).map(([field, kind]) => [field, new InMemoryKind<KubeObject>(kind)] as const);
  const kinds = Object.fromEntries(all) as unknown as KindsOf;
  const caches = Object.fromEntries(all.map(([field, k]) => [field, k.cache])) as unknown as Caches;
  addIndexes(caches);
  for (const [field, kind] of all) kind.seed((options.seed as Record<string, KubeObject[]> | undefined)?.[field] ?? []);
  const config = loadConfig({ ...options.env });
  const cidrs = options.cidrs ?? [];
  const events: RecordedEvent[] = [];
  const deps: Deps = {
    clients: kinds,
    caches,
    config,
    cidrs: { current: () => cidrs },
    launcher: { guestEvent: () => Promise.resolve(undefined), volumeError: (pod) => Promise.resolve(options.volumeErrors?.[pod.metadata.name ?? '']) },
    usb: new ReadyPort<VmUsbPort>(),
    kubevirt: options.kubevirt ?? { where: 'InternalVirtualizationKubeVirt d8-virtualization/config', missing: () => [] },
    events: {
      record: (regarding, input) => {
        events.push({ regarding: objectKey(regarding.metadata), ...input });
        return Promise.resolve();
      },
    },
  };
  return { deps, kinds, config, events };
}

/** A handler context for one pass: a live signal, the root logger, one clock reading. */
export function handlerContext(now = new Date()): HandlerContext {
  return { signal: new AbortController().signal, log: rootLogger, now };
}
