import { objectKey, type KubeObject } from './descriptor.js';

/** The informer's local cache, keyed by `namespace/name` (or `name` when cluster-scoped). */
export class Store<T extends KubeObject> {
  private readonly items = new Map<string, T>();

  get(ref: { namespace?: string | undefined; name: string } | string): T | undefined {
    return this.items.get(typeof ref === 'string' ? ref : objectKey(ref));
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  get size(): number {
    return this.items.size;
  }

  /** Put an object; returns the one it replaced. */
  set(obj: T): T | undefined {
    const key = objectKey(obj.metadata);
    const old = this.items.get(key);
    this.items.set(key, obj);
    return old;
  }

  /** Remove by key; returns what was there. */
  delete(key: string): T | undefined {
    const old = this.items.get(key);
    this.items.delete(key);
    return old;
  }
}
