import { describe, expect, it } from '@jest/globals';
import { digestInto, DuplicateFilter } from './dedup.js';

describe('DuplicateFilter', () => {
  it('flags the same audit ID and stage seen again within the window', () => {
    const f = new DuplicateFilter({ ttlMs: 1000, capacity: 10, now: () => 0 });
    expect(f.isDuplicate('a', 'ResponseComplete')).toBe(false);
    expect(f.isDuplicate('a', 'ResponseComplete')).toBe(true);
  });

  it('keeps (auditID, stage) pairs apart that concatenate to the same text', () => {
    const f = new DuplicateFilter({ ttlMs: 1000, capacity: 10, now: () => 0 });
    expect(f.isDuplicate('a\u0000', 'b')).toBe(false);
    expect(f.isDuplicate('a', '\u0000b')).toBe(false);
    expect(f.isDuplicate('ab', '')).toBe(false);
    expect(f.isDuplicate('', 'ab')).toBe(false);
    // Lone surrogates: distinct UTF-16 strings that UTF-8 would encode alike.
    expect(f.isDuplicate('\ud800', 's')).toBe(false);
    expect(f.isDuplicate('\udc00', 's')).toBe(false);
    expect(f.size).toBe(6);
    expect(f.isDuplicate('a\u0000', 'b')).toBe(true);
  });

  // Expected words from the reference MurmurHash3_x86_128 (Python mmh3, x64arch=False, seed 0) over the
  // UTF-16LE bytes of each string, read as four little-endian signed 32-bit words: every tail length.
  it.each([
    ['5:audit1ResponseComplete', [538893722, 1654941515, -2145378274, 1400355065]],
    ['a', [54243734, -856731679, -856731679, -856731679]],
    ['abc', [727422883, 553082805, 1343406772, 1343406772]],
    ['abcdefgh', [1815443029, -1913087839, -1486019827, 1108635924]],
    ['abcdefghi', [396613426, 938402950, 80977633, -293638692]],
    ['\u00e9\u4e2d\ud800', [173173680, 286485106, 557630768, 557630768]],
  ])('digests %j as MurmurHash3 x86_128 of its UTF-16LE bytes', (key, words) => {
    const out = new Int32Array(4);
    digestInto(key, out);
    expect([...out]).toEqual(words);
  });

  it('gives 200,000 distinct keys 200,000 distinct 128-bit digests, the same each time', () => {
    const seen = new Set<string>();
    const out = new Int32Array(4);
    let freeFirstWords = 0;
    for (let i = 0; i < 200_000; i++) {
      // Lengths 1..~40 code units, so every tail length and several blocks are covered.
      const id = `${i.toString(36)}-${'x'.repeat(i % 29)}`;
      digestInto(`${id}${i % 2 === 0 ? 'ResponseComplete' : 'RequestReceived'}`, out);
      if (out[0] === 0) freeFirstWords++;
      seen.add(out.join(','));
    }
    expect(seen.size).toBe(200_000);
    expect(freeFirstWords).toBe(0);
    const again = new Int32Array(4);
    digestInto('audit-1ResponseComplete', out);
    digestInto('audit-1ResponseComplete', again);
    expect([...again]).toEqual([...out]);
    digestInto('audit-1ResponseStarted', again);
    expect([...again]).not.toEqual([...out]);
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

  it('keeps a key recorded again after it expired until its new time runs out', () => {
    let now = 0;
    const f = new DuplicateFilter({ ttlMs: 10, capacity: 3, now: () => now });
    f.isDuplicate('a', 's');
    now = 10;
    expect(f.isDuplicate('a', 's')).toBe(false);
    now = 15;
    for (const id of ['b', 'c']) f.isDuplicate(id, 's');
    expect(f.isDuplicate('a', 's')).toBe(true);
    expect(f.size).toBe(3);
  });

  it('keeps forgetting exactly the oldest key through many wraps of its ring', () => {
    const f = new DuplicateFilter({ ttlMs: 1_000_000, capacity: 7, now: () => 0 });
    for (let i = 0; i < 1000; i++) {
      expect(f.isDuplicate(`k${i}`, 's')).toBe(false);
      expect(f.size).toBe(Math.min(i + 1, 7));
      if (i >= 7) expect(f.isDuplicate(`k${i - 6}`, 's')).toBe(true);
    }
  });

  it('answers like a plain list of remembered keys over random traffic (collisions, wraps, expiry)', () => {
    // A seeded generator so a failure repeats; few distinct ids so duplicates and probe runs are common.
    let seed = 12345;
    const random = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (const capacity of [1, 2, 5, 16, 37]) {
      let now = 0;
      const ttlMs = 50;
      const f = new DuplicateFilter({ ttlMs, capacity, now: () => now });
      let model: Array<{ key: string; at: number }> = [];
      for (let i = 0; i < 4000; i++) {
        now += random(3);
        const key = `id-${random(3 * capacity + 3)}`;
        model = model.filter((m) => now - m.at < ttlMs);
        const expected = model.some((m) => m.key === key);
        if (!expected) {
          if (model.length === capacity) model.shift();
          model.push({ key, at: now });
        }
        expect(f.isDuplicate(key, 's')).toBe(expected);
        expect(f.size).toBe(model.length);
      }
    }
  });

  // Recording a key at capacity costs about what it costs when empty: a speed ratio, measured by
  // tests/bench/audit-dedup.bench.ts (`npm run bench -- audit-dedup`), not timed here.
});
