import { describe, expect, it } from '@jest/globals';
import { waitFor } from '../testing/wait.js';
import { Backoff, sleep } from './backoff.js';

describe('Backoff', () => {
  it('doubles from the initial delay up to the cap and starts over after reset', () => {
    const b = new Backoff({ initialMs: 100, maxMs: 500 });
    expect([b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([100, 200, 400, 500, 500]);
    expect(b.failures).toBe(5);
    b.reset();
    expect(b.next()).toBe(100);
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
