import { describe, expect, it } from '@jest/globals';
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

  it('wakes from sleep as soon as the signal aborts', async () => {
    const ctl = new AbortController();
    const started = Date.now();
    const done = sleep(60_000, ctl.signal);
    ctl.abort();
    await done;
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
