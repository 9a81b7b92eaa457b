import { describe, expect, it } from '@jest/globals';
import { TtlCache } from './ttl-cache.js';

describe('TtlCache', () => {
  it('reuses a result within the TTL and loads again after it', async () => {
    let now = 0;
    let loads = 0;
    const cache = new TtlCache({ ttlMs: 100, maxEntries: 10, now: () => now });
    const load = (): Promise<number> => Promise.resolve((loads += 1));
    expect(await cache.get('k', load)).toBe(1);
    now = 99;
    expect(await cache.get('k', load)).toBe(1);
    now = 100;
    expect(await cache.get('k', load)).toBe(2);
  });

  it('answers a stale result while one background read refreshes it, then the fresh one', async () => {
    let now = 0;
    let loads = 0;
    let release: () => void = () => undefined;
    const cache = new TtlCache({ ttlMs: 100, staleMs: 100, maxEntries: 10, now: () => now });
    const slow = (): Promise<number> => {
      loads += 1;
      const n = loads;
      return n === 1 ? Promise.resolve(n) : new Promise((r) => (release = () => r(n)));
    };
    expect(await cache.get('k', slow)).toBe(1);
    now = 150;
    expect(await cache.get('k', slow)).toBe(1);
    expect(await cache.get('k', slow)).toBe(1);
    expect(loads).toBe(2);
    release();
    await Promise.resolve();
    await Promise.resolve();
    expect(await cache.get('k', slow)).toBe(2);
    now = 1000;
    void cache.get('k', slow);
    expect(loads).toBe(3);
  });

  it('shares one call between concurrent lookups and forgets failures', async () => {
    let loads = 0;
    const cache = new TtlCache({ ttlMs: 1000, maxEntries: 10 });
    const failing = (): Promise<number> => {
      loads += 1;
      return Promise.reject(new Error('down'));
    };
    const results = await Promise.allSettled([cache.get('k', failing), cache.get('k', failing)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(loads).toBe(1);
    expect(await cache.get('k', () => Promise.resolve(7))).toBe(7);
  });

  it('drops the oldest entries beyond its size', async () => {
    const cache = new TtlCache({ ttlMs: 1000, maxEntries: 2 });
    for (const k of ['a', 'b', 'c']) await cache.get(k, () => Promise.resolve(k));
    expect(cache.size).toBe(2);
    expect(await cache.get('a', () => Promise.resolve('again'))).toBe('again');
  });

  it('gives each result the lifetime ttlOf chooses for it', async () => {
    let now = 0;
    const loads: string[] = [];
    const cache = new TtlCache({ ttlMs: 1000, maxEntries: 10, now: () => now });
    const ttlOf = (v: string): number => (v.startsWith('no') ? 100 : 1000);
    const load = (k: string) => (): Promise<string> => {
      loads.push(k);
      return Promise.resolve(k);
    };
    await cache.get('yes', load('yes'), ttlOf);
    await cache.get('no', load('no'), ttlOf);
    now = 99;
    await Promise.all([cache.get('yes', load('yes'), ttlOf), cache.get('no', load('no'), ttlOf)]);
    expect(loads).toEqual(['yes', 'no']);
    now = 100;
    await Promise.all([cache.get('yes', load('yes'), ttlOf), cache.get('no', load('no'), ttlOf)]);
    expect(loads).toEqual(['yes', 'no', 'no']);
    now = 1000;
    await cache.get('yes', load('yes'), ttlOf);
    expect(loads).toEqual(['yes', 'no', 'no', 'yes']);
  });
});
