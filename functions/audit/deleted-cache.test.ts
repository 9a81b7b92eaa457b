import { describe, expect, it } from '@jest/globals';
import { DeletedCache } from './deleted-cache.js';

describe('DeletedCache', () => {
  it('finds a deleted VirtualDisk under its own resource, not under pods', () => {
    const cache = new DeletedCache({ ttlMs: 1000, capacity: 10, now: () => 0 });
    cache.put('virtualdisks', 'ns1', 'disk', { kind: 'VirtualDisk' });
    expect(cache.get('virtualdisks', 'ns1', 'disk')).toEqual({ kind: 'VirtualDisk' });
    expect(cache.get('pods', 'ns1', 'disk')).toBeUndefined();
  });

  it('forgets an object once its time is up', () => {
    let now = 0;
    const cache = new DeletedCache({ ttlMs: 1000, capacity: 10, now: () => now });
    cache.put('pods', 'ns1', 'p', {});
    now = 999;
    expect(cache.get('pods', 'ns1', 'p')).toBeDefined();
    now = 1000;
    expect(cache.get('pods', 'ns1', 'p')).toBeUndefined();
  });

  it('keeps the latest state when an object is stored twice', () => {
    const cache = new DeletedCache({ ttlMs: 1000, capacity: 10, now: () => 0 });
    cache.put('pods', 'ns1', 'p', { v: 1 });
    cache.put('pods', 'ns1', 'p', { v: 2 });
    expect(cache.get('pods', 'ns1', 'p')).toEqual({ v: 2 });
    expect(cache.size).toBe(1);
  });

  it('holds at most its capacity, dropping the oldest', () => {
    const cache = new DeletedCache({ ttlMs: 1000, capacity: 2, now: () => 0 });
    for (const name of ['a', 'b', 'c']) cache.put('pods', 'ns1', name, name);
    expect([cache.get('pods', 'ns1', 'a'), cache.get('pods', 'ns1', 'c'), cache.size]).toEqual([undefined, 'c', 2]);
  });
});
