import { LRUCache } from 'lru-cache';

/**
 * The results of asynchronous lookups, kept in `lru-cache`: a result is reused for `ttlMs`; after
 * that, for `staleMs` more, it is still answered while one background read refreshes it; concurrent
 * lookups of one key share one call; failures are not kept; the least recently used entries go once
 * there are more than `maxEntries`. `ttlMs` 0 reads every time (still one call per key at a time).
 */
export interface LookupCacheOptions {
  readonly ttlMs: number;
  /** How long past the TTL a result may still be answered while it is refreshed; 0 waits for the read. */
  readonly staleMs?: number;
  readonly maxEntries: number;
  /** Milliseconds, monotonic; injectable for tests. */
  readonly now?: () => number;
}

/** lru-cache keeps no `undefined`, which a lookup may answer ("not found"): values go in a box. */
interface Box {
  readonly value: unknown;
}

interface Load {
  readonly load: () => Promise<unknown>;
  readonly ttlOf: ((value: never) => number) | undefined;
}

export class LookupCache {
  private readonly lru: LRUCache<string, Box, Load>;
  private readonly staleMs: number;

  constructor(private readonly options: LookupCacheOptions) {
    this.staleMs = options.staleMs ?? 0;
    const now = options.now ?? (() => performance.now());
    this.lru = new LRUCache<string, Box, Load>({
      max: options.maxEntries,
      ...(options.ttlMs > 0 ? { ttl: options.ttlMs } : {}),
      ttlResolution: 0,
      // lru-cache reads a start time of 0 as "no TTL"; a clock starting at 0 (tests) must not.
      perf: { now: () => now() + 1 },
      // A failed refresh leaves the stale result (within its window) and the next lookup retries.
      noDeleteOnFetchRejection: true,
      fetchMethod: async (_key, _stale, { options: set, context }) => {
        const value = await context.load();
        if (context.ttlOf !== undefined) set.ttl = (context.ttlOf as (v: unknown) => number)(value);
        return { value };
      },
    });
  }

  get size(): number {
    return this.lru.size;
  }

  /**
   * The cached result for `key`, or `load()`'s. `ttlOf` may give a result its own lifetime (e.g. a
   * denial shorter than an approval); the options' `ttlMs` otherwise.
   */
  async get<T>(key: string, load: () => Promise<T>, ttlOf?: (value: T) => number): Promise<T> {
    // A stale result is answered (while it is read again) only within `staleMs` past its TTL.
    const box = await this.lru.fetch(key, {
      context: { load, ttlOf },
      allowStale: this.staleMs > 0 && this.lru.getRemainingTTL(key) > -this.staleMs,
      forceRefresh: this.options.ttlMs === 0,
    });
    return box?.value as T;
  }

  clear(): void {
    this.lru.clear();
  }
}
