import { objectKey, type KubeObject } from './descriptor.js';
import type { InvalidObjectError } from './errors.js';

/** The latest version of an object that did not match the schema, as the apiserver sent it. */
export interface InvalidEntry {
  readonly object: KubeObject;
  readonly error: InvalidObjectError;
}

/**
 * The informer's local cache, keyed by `namespace/name` (or `name` when cluster-scoped).
 *
 * `get`, `list`, `keys` and `size` hold objects that matched the schema. When the latest version of an
 * object does not, `invalid(key)` holds that version and its error, and `get` keeps answering the last
 * version that matched (if any), so a reader neither loses the object nor mistakes it for deleted; a
 * reader that must not act on a stale copy checks `invalid(key)` first.
 */
export class Store<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly invalidItems = new Map<string, InvalidEntry>();

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

  /** Put an object that matched the schema (clearing an invalid mark); returns the one it replaced. */
  set(obj: T): T | undefined {
    const key = objectKey(obj.metadata);
    const old = this.items.get(key);
    this.items.set(key, obj);
    this.invalidItems.delete(key);
    return old;
  }

  /** Remove by key (valid copy and invalid mark); returns the valid copy that was there. */
  delete(key: string): T | undefined {
    const old = this.items.get(key);
    this.items.delete(key);
    this.invalidItems.delete(key);
    return old;
  }

  /** Record that the latest version of `key` does not match the schema. */
  setInvalid(key: string, entry: InvalidEntry): void {
    this.invalidItems.set(key, entry);
  }

  /** The latest version of `key` when it did not match the schema; undefined when it did. */
  invalid(key: string): InvalidEntry | undefined {
    return this.invalidItems.get(key);
  }

  /** Keys whose latest version did not match the schema. */
  invalidKeys(): string[] {
    return [...this.invalidItems.keys()];
  }
}
