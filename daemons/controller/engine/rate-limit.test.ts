import { describe, expect, it } from '@jest/globals';
import { FakeClock } from './fake-clock.js';
import { BucketLimiter, ItemExponentialLimiter, controllerRateLimiter } from './rate-limit.js';

describe('retry rate limiters', () => {
  it('doubles the delay per failure of a key from 5 ms up to the 1000 s cap, and forgets it after a success', () => {
    const limiter = new ItemExponentialLimiter({ jitter: 0 });
    const delays = Array.from({ length: 20 }, () => limiter.when('a'));
    expect(delays.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
    expect(delays.slice(-3)).toEqual([655_360, 1_000_000, 1_000_000]);
    expect([limiter.retries('a'), limiter.when('b')]).toEqual([20, 5]); // keys are independent
    limiter.forget('a');
    expect([limiter.retries('a'), limiter.when('a')]).toEqual([0, 5]);
  });

  it('adds at most the jitter fraction, never beyond the cap', () => {
    const high = new ItemExponentialLimiter({ baseMs: 100, maxMs: 150, jitter: 0.1, random: () => 0.999 });
    expect([high.when('a'), high.when('a'), high.when('a')]).toEqual([110, 150, 150]);
  });

  it('lets a burst of retries through at once, then spaces them at the overall rate', () => {
    const clock = new FakeClock();
    const bucket = new BucketLimiter({ qps: 10, burst: 3, clock });
    expect([bucket.when(), bucket.when(), bucket.when(), bucket.when(), bucket.when()]).toEqual([0, 0, 0, 100, 200]);
    clock.advance(1000); // refills, up to the burst
    expect([bucket.when(), bucket.when(), bucket.when(), bucket.when()]).toEqual([0, 0, 0, 100]);
  });

  it('waits for the longer of the per-key and the overall delay (controller-runtime’s default)', () => {
    const clock = new FakeClock();
    const limiter = controllerRateLimiter({ clock, random: () => 0, qps: 10, burst: 1 });
    expect([limiter.when('a'), limiter.when('b'), limiter.when('c')]).toEqual([5, 100, 200]);
    expect(limiter.retries('a')).toBe(1);
  });
});
