import { describe, expect, it } from '@jest/globals';
import { DuplicateFilter } from './dedup.js';

describe('DuplicateFilter', () => {
  it('flags the same audit ID and stage seen again within the window', () => {
    const f = new DuplicateFilter({ ttlMs: 1000, capacity: 10, now: () => 0 });
    expect(f.isDuplicate('a', 'ResponseComplete')).toBe(false);
    expect(f.isDuplicate('a', 'ResponseComplete')).toBe(true);
  });

  it('treats another stage of the same request as a new event', () => {
    const f = new DuplicateFilter({ ttlMs: 1000, capacity: 10, now: () => 0 });
    expect(f.isDuplicate('a', 'RequestReceived')).toBe(false);
    expect(f.isDuplicate('a', 'ResponseComplete')).toBe(false);
  });

  it('forgets a key after the window', () => {
    let now = 0;
    const f = new DuplicateFilter({ ttlMs: 1000, capacity: 10, now: () => now });
    f.isDuplicate('a', 's');
    now = 1000;
    expect(f.isDuplicate('a', 's')).toBe(false);
  });

  it('never remembers more keys than its capacity, forgetting the oldest first', () => {
    const f = new DuplicateFilter({ ttlMs: 1000, capacity: 3, now: () => 0 });
    for (const id of ['a', 'b', 'c', 'd']) f.isDuplicate(id, 's');
    expect(f.size).toBe(3);
    expect(f.isDuplicate('d', 's')).toBe(true);
    expect(f.isDuplicate('a', 's')).toBe(false);
  });

  it('drops expired keys while recording new ones', () => {
    let now = 0;
    const f = new DuplicateFilter({ ttlMs: 10, capacity: 100, now: () => now });
    for (const id of ['a', 'b', 'c']) f.isDuplicate(id, 's');
    now = 20;
    f.isDuplicate('d', 's');
    expect(f.size).toBe(1);
  });
});
