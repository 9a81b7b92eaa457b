import { describe, expect, it } from '@jest/globals';
import { waitFor } from '../testing/wait.js';
import { Backoff, doublingDelay, sleep } from './backoff.js';

describe('Backoff', () => {
  it('doubles from the initial delay up to the cap and starts over after reset', () => {
    const b = new Backoff({ initialMs: 100, maxMs: 500 });
    expect([b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([100, 200, 400, 500, 500]);
    expect(b.failures).toBe(5);
    b.reset();
    expect(b.next()).toBe(100);
  });

  it('computes the delay of a given retry without state: initial, doubling, capped, never below initial for a negative attempt', () => {
    const o = { initialMs: 2_000, maxMs: 300_000 };
    expect([0, 1, 2, 3, 7, 8, 100].map((n) => doublingDelay(o, n))).toEqual([2_000, 4_000, 8_000, 16_000, 256_000, 300_000, 300_000]);
    expect(doublingDelay(o, -1)).toBe(2_000);
  });

  it('adds jitter up to the given fraction', () => {
    const b = new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0.5 }, () => 1);
    expect(b.next()).toBe(150);
  });

  it('wakes from sleep, without an error, as soon as the signal aborts', async () => {
    const ctl = new AbortController();
    let outcome: unknown;
    void sleep(3_600_000, ctl.signal).then(
      () => (outcome = 'woke'),
      (err: unknown) => (outcome = err),
    );
    ctl.abort();
    // An hour's sleep that ends within the wait's deadline can only have been cut short.
    expect(await waitFor('the sleep to end', () => outcome)).toBe('woke');
  });
});
