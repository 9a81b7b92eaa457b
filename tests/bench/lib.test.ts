import { describe, expect, it } from '@jest/globals';
import { cpuWindow, dateCell, insertResultRow, interleaved, medianBy, percentile, pool, ratio, summarize } from './lib.js';

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

  it('runs every task with at most the limit in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const done: number[] = [];
    const tasks = Array.from({ length: 7 }, (_, i) => async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      done.push(i);
    });
    await pool(tasks, 3);
    expect([most, [...done].sort((a, b) => a - b)]).toEqual([3, [0, 1, 2, 3, 4, 5, 6]]);
  });

  it('counts the CPU of the processes it is given and of its own process over a window', () => {
    const end = cpuWindow(new Map([['self', process.pid]]));
    const until = Date.now() + 50;
    while (Date.now() < until) Math.sqrt(Math.random());
    const use = end();
    expect([...use.processes.keys()]).toEqual(['self', 'bench client']);
    expect(use.processes.get('bench client')).toBeGreaterThan(0);
    expect(use.busy >= 0 && use.busy <= 1).toBe(true);
  });

  const RESULTS = [
    '# results',
    '',
    '## audit (`npm run bench -- audit`)',
    'text',
    '',
    '| date (UTC) | a | machine |',
    '|---|---|---|',
    '| old | 1 | x |',
    '',
    '## dra',
    '',
  ].join('\n');

  it('inserts a results row as the newest row of the table of its section', () => {
    const out = insertResultRow(RESULTS, 'audit', ['2026-12-06 05:00', '2 | 3', 'load 1']).split('\n');
    expect(out.slice(5, 9)).toEqual(['| date (UTC) | a | machine |', '|---|---|---|', '| 2026-12-06 05:00 | 2 / 3 | load 1 |', '| old | 1 | x |']);
    expect(dateCell(new Date('2026-12-06T05:07:59Z'))).toBe('2026-12-06 05:07');
  });

  it('refuses a row for a missing section, a section without a dated table, or the wrong number of cells', () => {
    expect(() => insertResultRow(RESULTS, 'nope', ['a'])).toThrow('no section "## nope"');
    expect(() => insertResultRow(RESULTS, 'dra', ['a'])).toThrow('section "dra" has no table whose first column is the date');
    expect(() => insertResultRow(RESULTS, 'audit', ['a', 'b'])).toThrow('section "audit" has 3 columns, the row has 2');
  });
});
