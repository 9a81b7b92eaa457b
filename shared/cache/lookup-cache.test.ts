import { describe, expect, it } from '@jest/globals';
import { LookupCache } from './lookup-cache.js';

/** A load whose calls are counted and each settled by hand. */
function manual(): { load: () => Promise<number>; calls: number; settle: (ok: boolean) => void } {
  const pending: Array<{ resolve: (n: number) => void; reject: (e: Error) => void; n: number }> = [];
  const m = {
    calls: 0,
    load: (): Promise<number> =>
      new Promise<number>((resolve, reject) => {
        m.calls += 1;
        pending.push({ resolve, reject, n: m.calls });
      }),
    settle: (ok: boolean): void => {
      const next = pending.shift();
      if (next === undefined) throw new Error('no load is pending');
      if (ok) next.resolve(next.n);
      else next.reject(new Error(`load ${next.n} failed`));
    },
  };
  return m;
}

/** Ask until the cache answers `want` (a background read lands a few ticks after it settles). */
async function until(get: () => Promise<number>, want: number): Promise<void> {
  for (;;) {
    if ((await get()) === want) return;
    await new Promise((r) => setImmediate(r));
  }
}

describe('LookupCache (lru-cache)', () => {
  it('reuses a result within the TTL and loads again once more than the TTL has passed', async () => {
    let now = 0;
    let loads = 0;
    const cache = new LookupCache({ ttlMs: 100, maxEntries: 10, now: () => now });
    const load = (): Promise<number> => Promise.resolve((loads += 1));
    expect(await cache.get('k', load)).toBe(1);
    now = 100;
    expect(await cache.get('k', load)).toBe(1);
    now = 101;
    expect(await cache.get('k', load)).toBe(2);
  });

  it('answers a stale result while one background read refreshes it, then the fresh one', async () => {
    let now = 0;
    const m = manual();
    const cache = new LookupCache({ ttlMs: 100, staleMs: 100, maxEntries: 10, now: () => now });
    const first = cache.get('k', m.load);
    m.settle(true);
    expect(await first).toBe(1);
    now = 150;
    expect(await cache.get('k', m.load)).toBe(1);
    expect(await cache.get('k', m.load)).toBe(1);
    expect(m.calls).toBe(2);
    m.settle(true);
    await until(() => cache.get('k', m.load), 2);
    expect(m.calls).toBe(2);
  });

  it('waits for the read once a result is past its stale window', async () => {
    let now = 0;
    const m = manual();
    const cache = new LookupCache({ ttlMs: 100, staleMs: 100, maxEntries: 10, now: () => now });
    const first = cache.get('k', m.load);
    m.settle(true);
    await first;
    now = 201;
    const second = cache.get('k', m.load);
    m.settle(true);
    expect(await second).toBe(2);
  });

  it('keeps the stale result when a refresh fails, and the next lookup reads again', async () => {
    let now = 0;
    const m = manual();
    const cache = new LookupCache({ ttlMs: 100, staleMs: 100, maxEntries: 10, now: () => now });
    const first = cache.get('k', m.load);
    m.settle(true);
    await first;
    now = 150;
    expect(await cache.get('k', m.load)).toBe(1);
    m.settle(false);
    await until(async () => (await cache.get('k', m.load)) + (m.calls === 3 ? 100 : 0), 101);
    m.settle(true);
    await until(() => cache.get('k', m.load), 3);
  });

  it('shares one call between concurrent lookups and forgets failures', async () => {
    let loads = 0;
    const cache = new LookupCache({ ttlMs: 1000, maxEntries: 10 });
    const failing = (): Promise<number> => {
      loads += 1;
      return Promise.reject(new Error('down'));
    };
    const results = await Promise.allSettled([cache.get('k', failing), cache.get('k', failing)]);
    expect(results).toEqual([
      { status: 'rejected', reason: new Error('down') },
      { status: 'rejected', reason: new Error('down') },
    ]);
    expect(loads).toBe(1);
    expect(await cache.get('k', () => Promise.resolve(7))).toBe(7);
  });

  it('with ttlMs 0 reads every time, but still one call per key at a time', async () => {
    const m = manual();
    const cache = new LookupCache({ ttlMs: 0, maxEntries: 10 });
    const both = Promise.all([cache.get('k', m.load), cache.get('k', m.load)]);
    m.settle(true);
    expect(await both).toEqual([1, 1]);
    const again = cache.get('k', m.load);
    m.settle(true);
    expect(await again).toBe(2);
  });

  it('keeps an undefined answer (not found) like any other', async () => {
    let loads = 0;
    const cache = new LookupCache({ ttlMs: 1000, maxEntries: 10 });
    const load = (): Promise<undefined> => {
      loads += 1;
      return Promise.resolve(undefined);
    };
    expect(await cache.get('k', load)).toBeUndefined();
    expect(await cache.get('k', load)).toBeUndefined();
    expect(loads).toBe(1);
  });

  it('drops the least recently used entries beyond its size', async () => {
    const cache = new LookupCache({ ttlMs: 1000, maxEntries: 2 });
    for (const k of ['a', 'b', 'c']) await cache.get(k, () => Promise.resolve(k));
    expect(cache.size).toBe(2);
    expect(await cache.get('a', () => Promise.resolve('again'))).toBe('again');
    expect(await cache.get('c', () => Promise.resolve('again'))).toBe('c');
  });

  it('gives each result the lifetime ttlOf chooses for it', async () => {
    let now = 0;
    const loads: string[] = [];
    const cache = new LookupCache({ ttlMs: 1000, maxEntries: 10, now: () => now });
    const ttlOf = (v: string): number => (v.startsWith('no') ? 100 : 1000);
    const load = (k: string) => (): Promise<string> => {
      loads.push(k);
      return Promise.resolve(k);
    };
    await cache.get('yes', load('yes'), ttlOf);
    await cache.get('no', load('no'), ttlOf);
    now = 100;
    await Promise.all([cache.get('yes', load('yes'), ttlOf), cache.get('no', load('no'), ttlOf)]);
    expect(loads).toEqual(['yes', 'no']);
    now = 101;
    await Promise.all([cache.get('yes', load('yes'), ttlOf), cache.get('no', load('no'), ttlOf)]);
    expect(loads).toEqual(['yes', 'no', 'no']);
    now = 1001;
    await cache.get('yes', load('yes'), ttlOf);
    expect(loads).toEqual(['yes', 'no', 'no', 'yes']);
  });
});
