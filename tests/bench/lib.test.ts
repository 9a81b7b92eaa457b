import { describe, expect, it } from '@jest/globals';
import { interleaved, medianBy, percentile, ratio, summarize } from './lib.js';

describe('benchmark helpers', () => {
  it('takes nearest-rank percentiles of sorted values', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(values, 50), percentile(values, 99), percentile(values, 100), percentile([7], 50)]).toEqual([50, 99, 100, 7]);
  });

  it('summarizes unsorted values', () => {
    expect(summarize([5, 1, 3, 2, 4])).toEqual({ n: 5, min: 1, p50: 3, p90: 5, p99: 5, max: 5, mean: 3 });
  });

  it('picks the median item by a key and divides by a baseline', () => {
    const runs = [{ rps: 10 }, { rps: 30 }, { rps: 20 }];
    expect([medianBy(runs, (r) => r.rps), ratio(30, 10), ratio(1, 0)]).toEqual([{ rps: 20 }, 3, Number.NaN]);
  });

  it('measures variants round by round, interleaved', async () => {
    const order: string[] = [];
    const results = await interleaved(['a', 'b'], 2, (v) => {
      order.push(v);
      return Promise.resolve(`${v}${order.length}`);
    });
    expect([order, results]).toEqual([
      ['a', 'b', 'a', 'b'],
      [
        ['a1', 'a3'],
        ['b2', 'b4'],
      ],
    ]);
  });
});
