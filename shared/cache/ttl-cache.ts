/**
 * A small cache of lookups: a result is reused for `ttlMs`; after that, for `staleMs` more, it is
 * still answered while one background read refreshes it (so a refresh never stalls a request);
 * concurrent lookups of one key share one call; failures are not kept; the oldest entries go once
 * there are more than `maxEntries`.
 */
export interface TtlCacheOptions {
  readonly ttlMs: number;
  /** How long past the TTL a result may still be answered while it is refreshed; 0 waits for the read. */
  readonly staleMs?: number;
  readonly maxEntries: number;
  /** Milliseconds, monotonic; injectable for tests. */
  readonly now?: () => number;
}

interface Entry {
  expires: number;
  staleUntil: number;
  readonly value: Promise<unknown>;
  settled: boolean;
  refreshing: boolean;
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

  /**
   * The cached result for `key`, or `load()`'s. `ttlOf` may give a result its own lifetime (e.g. a
   * denial shorter than an approval); the options' `ttlMs` otherwise.
   */
  get<T>(key: string, load: () => Promise<T>, ttlOf?: (value: T) => number): Promise<T> {
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit !== undefined && (hit.expires > now || !hit.settled)) return hit.value as Promise<T>;
    if (hit !== undefined && hit.staleUntil > now) {
      if (!hit.refreshing) this.refresh(key, hit, load, ttlOf);
      return hit.value as Promise<T>;
    }
    return this.fill(key, load(), ttlOf);
  }

  clear(): void {
    this.entries.clear();
  }

  private fill<T>(key: string, value: Promise<T>, ttlOf?: (value: T) => number): Promise<T> {
    const now = this.now();
    const staleMs = this.options.staleMs ?? 0;
    const entry: Entry = { expires: now + this.options.ttlMs, staleUntil: now + this.options.ttlMs + staleMs, value, settled: false, refreshing: false };
    this.entries.delete(key);
    this.entries.set(key, entry);
    value.then(
      (result) => {
        entry.settled = true;
        if (ttlOf === undefined) return;
        entry.expires = now + ttlOf(result);
        entry.staleUntil = entry.expires + staleMs;
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    this.evict();
    return value;
  }

  /** Read again in the background; the stale entry answers until the new one is in. A failed read
   *  leaves the stale entry (not retried) until its stale window ends. */
  private refresh<T>(key: string, stale: Entry, load: () => Promise<T>, ttlOf?: (value: T) => number): void {
    stale.refreshing = true;
    const value = load();
    value.then(
      () => {
        if (this.entries.get(key) === stale) void this.fill(key, value, ttlOf);
      },
      () => undefined,
    );
  }

  private evict(): void {
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.options.maxEntries) return;
      this.entries.delete(key);
    }
  }
}
