import { objectKey, type Informer, type InvalidObjectError, type KubeObject } from '../../../shared/kube/index.js';

/** What the cache needs of an informer (an Informer satisfies it; tests feed events by hand). */
export type CacheSource<T extends KubeObject> = Pick<Informer<T>, 'on' | 'store' | 'synced' | 'start' | 'stop'>;

type IndexFn<T> = (obj: T) => readonly string[];

/** How many deletions are remembered (oldest forgotten first). */
const MAX_TOMBSTONES = 10_000;

/**
 * The reconcilers' read side: an informer's store, overlaid with the objects this process has just
 * written (a write's response is newer than the watch event still on its way), plus secondary
 * indexes (VMs by class, VMOPs by VM, ...). An overlay entry lives until the watch catches up.
 */
export class ObjectCache<T extends KubeObject> {
  private readonly overlay = new Map<string, T>();
  private readonly gone = new Set<string>();
  /** The last resourceVersion of deleted objects: a late write response must not bring them back. */
  private readonly tombstones = new Map<string, KubeObject>();
  private readonly indexFns = new Map<string, IndexFn<T>>();
  private readonly indexes = new Map<string, Map<string, Set<string>>>();
  /** The version of each object whose values are in the indexes: always the one get() answers. */
  private readonly indexed = new Map<string, T>();
  private removed = 0;

  constructor(readonly informer: CacheSource<T>) {
    informer.on('add', (obj) => this.observe(obj));
    informer.on('update', (obj) => this.observe(obj));
    informer.on('delete', (obj) => this.observeDelete(obj));
  }

  get synced(): Promise<void> {
    return this.informer.synced;
  }

  /**
   * How many times an object has left the cache so far (a delete seen, or `forget`). A reader that
   * concluded "all of these exist" (the address allocator's scan position) concludes again once it moved.
   */
  get removals(): number {
    return this.removed;
  }

  /** The freshest known version of an object. */
  get(key: string): T | undefined {
    if (this.gone.has(key)) return undefined;
    const cached = this.informer.store.get(key);
    const fresh = this.overlay.get(key);
    if (fresh === undefined) return cached;
    if (cached === undefined) return fresh;
    return newerOrEqual(cached, fresh) ? cached : fresh;
  }

  list(): T[] {
    const keys = new Set([...this.informer.store.keys(), ...this.overlay.keys()]);
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.get(key);
      if (obj !== undefined) out.push(obj);
    }
    return out;
  }

  /** Record an object this process wrote (the apiserver's answer). */
  remember(obj: T): T {
    const key = objectKey(obj.metadata);
    const tombstone = this.tombstones.get(key);
    if (tombstone !== undefined && newerOrEqual(tombstone, obj)) return obj;
    this.gone.delete(key);
    const cached = this.informer.store.get(key);
    if (cached === undefined || !newerOrEqual(cached, obj)) this.overlay.set(key, obj);
    this.reindex(key);
    return obj;
  }

  /** Record that this process deleted an object without finalizers (it is gone at once). */
  forget(key: string): void {
    this.removed++;
    this.overlay.delete(key);
    if (this.informer.store.get(key) !== undefined) this.gone.add(key);
    this.reindex(key);
  }

  /**
   * Why the latest version of an object did not match its schema (the informer keeps it aside; get()
   * answers the last version that matched). A reconciler must not act on such an object.
   */
  invalid(key: string): InvalidObjectError | undefined {
    return this.informer.store.invalid(key)?.error;
  }

  /** Maintain an index over what get() answers (own writes included); add it before the informer starts. */
  addIndex(name: string, fn: IndexFn<T>): void {
    this.indexFns.set(name, fn);
    this.indexes.set(name, new Map());
  }

  /** How many objects the index holds under `value` (no object is copied or looked up). */
  countByIndex(name: string, value: string): number {
    return this.indexes.get(name)?.get(value)?.size ?? 0;
  }

  /** Objects whose index values include `value`. */
  byIndex(name: string, value: string): T[] {
    const keys = this.indexes.get(name)?.get(value);
    if (keys === undefined) return [];
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.get(key);
      if (obj !== undefined) out.push(obj);
    }
    return out;
  }

  private observe(obj: T): void {
    const key = objectKey(obj.metadata);
    this.gone.delete(key);
    this.tombstones.delete(key);
    const fresh = this.overlay.get(key);
    if (fresh !== undefined && newerOrEqual(obj, fresh)) this.overlay.delete(key);
    this.reindex(key);
  }

  private observeDelete(obj: T): void {
    this.removed++;
    const key = objectKey(obj.metadata);
    this.overlay.delete(key);
    this.gone.delete(key);
    this.tombstones.delete(key);
    this.tombstones.set(key, { metadata: { resourceVersion: obj.metadata.resourceVersion } });
    if (this.tombstones.size > MAX_TOMBSTONES) this.tombstones.delete(this.tombstones.keys().next().value ?? '');
    this.reindex(key);
  }

  /** Make the indexes hold the values of what get(key) answers now. */
  private reindex(key: string): void {
    if (this.indexFns.size === 0) return;
    const before = this.indexed.get(key);
    const now = this.get(key);
    if (before === now) return;
    if (before !== undefined) this.unindex(key, before);
    if (now === undefined) this.indexed.delete(key);
    else {
      this.index(key, now);
      this.indexed.set(key, now);
    }
  }

  private index(key: string, obj: T): void {
    for (const [name, fn] of this.indexFns) {
      const index = this.indexes.get(name);
      if (index === undefined) continue;
      for (const value of fn(obj)) {
        let keys = index.get(value);
        if (keys === undefined) index.set(value, (keys = new Set()));
        keys.add(key);
      }
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexFns) {
      const index = this.indexes.get(name);
      for (const value of fn(obj)) {
        const keys = index?.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index?.delete(value);
      }
    }
  }
}

/** Whether `a` is at least as new as `b` (etcd revisions compared as numbers; unknown → a). */
export function newerOrEqual(a: KubeObject, b: KubeObject): boolean {
  const ra = a.metadata.resourceVersion;
  const rb = b.metadata.resourceVersion;
  if (ra === undefined || rb === undefined || !/^\d+$/.test(ra) || !/^\d+$/.test(rb)) return true;
  return BigInt(ra) >= BigInt(rb);
}
