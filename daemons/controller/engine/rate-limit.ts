/**
 * Retry rate limiters after client-go's workqueue (the one controller-runtime uses): how long a key
 * that failed waits before it is handed out again.
 */
import { realClock, type Clock } from './clock.js';

export interface RateLimiter {
  /** The delay before the key's next attempt; counts the attempt. */
  when(key: string): number;
  /** The key succeeded: forget its failures. */
  forget(key: string): void;
  /** Attempts counted for the key since it was last forgotten. */
  retries(key: string): number;
}

export interface ExponentialOptions {
  /** First delay (client-go: 5 ms). */
  baseMs?: number;
  /** Cap (client-go: 1000 s). */
  maxMs?: number;
  /** Random extra up to this fraction of the delay, within the cap (0 for none). */
  jitter?: number;
  random?: () => number;
}

/** Per key: base × 2^failures, with jitter, capped (client-go's ItemExponentialFailureRateLimiter). */
export class ItemExponentialLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly jitter: number;
  private readonly random: () => number;

  constructor(options: ExponentialOptions = {}) {
    this.baseMs = options.baseMs ?? 5;
    this.maxMs = options.maxMs ?? 1_000_000;
    this.jitter = options.jitter ?? 0.1;
    this.random = options.random ?? Math.random;
  }

  when(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    const delay = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(failures, 60));
    return Math.round(Math.min(this.maxMs, delay * (1 + this.jitter * this.random())));
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

export interface BucketOptions {
  /** Sustained retries per second over all keys (client-go: 10). */
  qps?: number;
  /** Retries allowed at once before the rate applies (client-go: 100). */
  burst?: number;
  clock?: Clock;
}

/**
 * Over all keys: a token bucket (client-go's BucketRateLimiter over golang.org/x/time/rate). Each
 * attempt reserves a token; when none is left it waits for the one the rate will have refilled.
 */
export class BucketLimiter implements RateLimiter {
  private readonly qps: number;
  private readonly burst: number;
  private readonly clock: Clock;
  private tokens: number;
  private at: number;

  constructor(options: BucketOptions = {}) {
    this.qps = options.qps ?? 10;
    this.burst = options.burst ?? 100;
    this.clock = options.clock ?? realClock;
    this.tokens = this.burst;
    this.at = this.clock.now();
  }

  when(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.qps);
    this.at = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  forget(): void {}

  retries(): number {
    return 0;
  }
}

/** The longest delay any of the limiters asks (client-go's MaxOfRateLimiter); every one counts the attempt. */
export class MaxOfLimiter implements RateLimiter {
  private readonly limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(0, ...this.limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  retries(key: string): number {
    return Math.max(0, ...this.limiters.map((l) => l.retries(key)));
  }
}

export interface ControllerRateLimitOptions extends ExponentialOptions {
  qps?: number;
  burst?: number;
  clock?: Clock;
}

/**
 * controller-runtime's default: per key 5 ms doubling to 1000 s, over all keys 10 retries per second
 * with a burst of 100, whichever waits longer.
 */
export function controllerRateLimiter(options: ControllerRateLimitOptions = {}): RateLimiter {
  return new MaxOfLimiter(new ItemExponentialLimiter(options), new BucketLimiter({ qps: options.qps, burst: options.burst, clock: options.clock }));
}
