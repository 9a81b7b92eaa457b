/** Value helpers of the rules: label syntax, the lookup cache, class conversion. */
import { describe, expect, it } from '@jest/globals';
import { fromV1alpha3 } from '../rules/vmclass-convert.js';
import { labelKeyProblem, labelValueProblem } from './names.js';
import { TtlCache } from './ttl-cache.js';



describe('label syntax', () => {
  it.each(['app', 'example.com/app', 'a_b.c-d'])('accepts the key %p', (key) => expect(labelKeyProblem(key)).toBeUndefined());
  it.each(['', '-app', 'a/b/c', 'Example.com/app', 'x'.repeat(64)])('refuses the key %p', (key) => expect(labelKeyProblem(key)).toBeDefined());
  it('accepts empty values and refuses spaces', () => {
    expect(labelValueProblem('')).toBeUndefined();
    expect(labelValueProblem('a b')).toBeDefined();
  });
});

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
});

describe('VirtualMachineClass v1alpha3 to v1alpha2', () => {
  it('turns percent strings into integers and keeps Auto', () => {
    const converted = fromV1alpha3({
      apiVersion: 'virtualization.deckhouse.io/v1alpha3',
      spec: { sizingPolicies: [{ coreFractions: ['5%', '100%'], defaultCoreFraction: '5%' }, { defaultCoreFraction: 'Auto' }] },
    });
    expect(converted).toEqual({
      ok: true,
      value: {
        apiVersion: 'virtualization.deckhouse.io/v1alpha2',
        spec: { sizingPolicies: [{ coreFractions: [5, 100], defaultCoreFraction: 5 }, { defaultCoreFraction: 'Auto' }] },
      },
    });
  });

  it('names every fraction that is not a percentage', () => {
    const converted = fromV1alpha3({ spec: { sizingPolicies: [{ coreFractions: [5, '0%'], defaultCoreFraction: 50 }] } });
    expect(converted).toEqual({
      ok: false,
      problems: [
        { path: 'spec.sizingPolicies[0].coreFractions[0]', message: 'must be a percentage from 1% to 100%' },
        { path: 'spec.sizingPolicies[0].coreFractions[1]', message: 'must be a percentage from 1% to 100%' },
        { path: 'spec.sizingPolicies[0].defaultCoreFraction', message: 'must be a percentage from 1% to 100%' },
      ],
    });
  });
});
