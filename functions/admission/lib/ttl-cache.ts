/**
 * A small cache of lookups: a result is reused for `ttlMs`, concurrent lookups of one key share one
 * call, failures are not kept, and the oldest entries go once there are more than `maxEntries`.
 */
export interface TtlCacheOptions {
  readonly ttlMs: number;
  readonly maxEntries: number;
  /** Milliseconds, monotonic; injectable for tests. */
  readonly now?: () => number;
}

interface Entry {
  readonly expires: number;
  readonly value: Promise<unknown>;
}

export class TtlCache {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;

  constructor(private readonly options: TtlCacheOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  get size(): number {
    return this.entries.size;
  }

  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.expires > this.now()) return hit.value as Promise<T>;
    const value = load();
    const entry: Entry = { expires: this.now() + this.options.ttlMs, value };
    this.entries.delete(key);
    this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    this.evict();
    return value;
  }

  clear(): void {
    this.entries.clear();
  }

  private evict(): void {
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.options.maxEntries) return;
      this.entries.delete(key);
    }
  }
}
