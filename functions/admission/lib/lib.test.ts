/** Value helpers of the rules: quantities, IPv4 subnets, label syntax, the lookup cache, class conversion. */
import { describe, expect, it } from '@jest/globals';
import { fromV1alpha3 } from '../rules/vmclass-convert.js';
import { ipToLeaseName, isUsableIn, leaseNameToIP, overlaps, parseSubnet } from './ipv4.js';
import { labelKeyProblem, labelValueProblem } from './names.js';
import { formatBytes, parseQuantity } from './quantity.js';
import { TtlCache } from './ttl-cache.js';

describe('parseQuantity', () => {
  it.each([
    ['10Gi', 10 * 2 ** 30],
    ['1.5G', 1.5e9],
    ['500m', 0.5],
    ['1e3', 1000],
    ['2E', 2e18],
    [1024, 1024],
    ['+.5Ki', 512],
  ])('reads %p', (q, value) => expect(parseQuantity(q)).toBe(value));

  it.each(['', 'Gi', '10 Gi', '10gi', 'ten'])('refuses %p', (q) => expect(parseQuantity(q)).toBeUndefined());

  it('formats byte counts with binary suffixes', () => {
    expect([formatBytes(2 ** 30), formatBytes(1.5 * 2 ** 30), formatBytes(512 * 2 ** 20), formatBytes(1000)]).toEqual(['1Gi', '1.5Gi', '512Mi', '1000']);
  });
});

describe('IPv4 subnets', () => {
  it('detects overlap and usable addresses', () => {
    const a = parseSubnet('10.0.0.0/16');
    const b = parseSubnet('10.0.200.0/24');
    const c = parseSubnet('10.1.0.0/16');
    expect(a && b && overlaps(a, b)).toBe(true);
    expect(a && c && overlaps(a, c)).toBe(false);
    const one = parseSubnet('10.0.0.7/32');
    expect(one && isUsableIn(one, (10 << 24) + 7)).toBe(true);
    expect(b && isUsableIn(b, (10 << 24) + (200 << 8))).toBe(false);
  });

  it('refuses what is not a subnet', () => {
    expect(['10.0.0.0', '10.0.0.0/33', '10.0.0.256/8', '01.0.0.0/8', 'x/8', '10.0.0.0/8/1'].map(parseSubnet)).toEqual(Array(6).fill(undefined));
  });

  it('maps lease names and addresses both ways', () => {
    expect(leaseNameToIP('ip-10-66-0-5')).toBe('10.66.0.5');
    expect(leaseNameToIP('ip-10-66-0-256')).toBeUndefined();
    expect(leaseNameToIP('mac-aa-bb')).toBeUndefined();
    expect(ipToLeaseName('10.66.0.5')).toBe('ip-10-66-0-5');
  });
});

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
