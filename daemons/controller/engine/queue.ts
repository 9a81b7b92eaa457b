import { realClock, type Clock, type TimerHandle } from './clock.js';
import { ItemExponentialLimiter, MaxOfLimiter, BucketLimiter, type RateLimiter } from './rate-limit.js';

/** What the queue reports (the `workqueue_*` metrics of client-go, for one queue). */
export interface WorkQueueMetrics {
  /** Keys waiting now (workqueue_depth). */
  depth(n: number): void;
  /** Keys being processed now (controller_runtime_active_workers). */
  inFlight(n: number): void;
  /** An add that queued a key (workqueue_adds_total). */
  added(): void;
  /** A rate-limited add: a retry (workqueue_retries_total). */
  retried(): void;
  /** From the add to a worker taking the key (workqueue_queue_duration_seconds). */
  queued(seconds: number): void;
  /** From a worker taking the key to done() (workqueue_work_duration_seconds). */
  worked(seconds: number): void;
}

export interface WorkQueueOptions {
  /** First retry delay after a failure; doubles per consecutive failure of the same key. Default 5 ms. */
  baseDelayMs?: number;
  /** Cap of the per-key retry delay. Default 1000 s. */
  maxDelayMs?: number;
  /** Retries per second over all keys, and how many may go at once. Default 10 and 100. */
  qps?: number;
  burst?: number;
  /** Replaces the limiter built from the options above. */
  rateLimiter?: RateLimiter;
  clock?: Clock;
  metrics?: WorkQueueMetrics;
}

/**
 * A keyed work queue with client-go semantics: a key waits in the queue at most once (dedup); a key
 * being processed is never handed to a second worker, and an add meanwhile marks it dirty so it is
 * queued again when the worker calls done(). Failed keys come back after the rate limiter's delay:
 * per key exponential with jitter and a cap, and a token bucket over all keys (controller-runtime's
 * default: 5 ms .. 1000 s, 10 per second with a burst of 100).
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Map<string, number>();
  private readonly dirty = new Set<string>();
  /** When each waiting (or dirty) key was added, for the queue latency. */
  private readonly addedAt = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; timer: TimerHandle }>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private readonly limiter: RateLimiter;
  private readonly clock: Clock;
  private readonly metrics: WorkQueueMetrics | undefined;
  private closed = false;

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.metrics = options.metrics;
    this.limiter =
      options.rateLimiter ??
      new MaxOfLimiter(
        new ItemExponentialLimiter({ baseMs: options.baseDelayMs ?? 5, maxMs: options.maxDelayMs ?? 1_000_000 }),
        new BucketLimiter({ qps: options.qps ?? 10, burst: options.burst ?? 100, clock: this.clock }),
      );
  }

  /** Queue a key now (no-op when it already waits). */
  add(key: string): void {
    if (this.closed) return;
    if (!this.addedAt.has(key) && !this.queued.has(key)) {
      this.addedAt.set(key, this.clock.now());
      this.metrics?.added();
    }
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      this.take(key);
      waiter(key);
      return;
    }
    this.queued.add(key);
    this.queue.push(key);
    this.metrics?.depth(this.queue.length);
  }

  /** Queue a key after a delay; an earlier pending delay for the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.closed) return;
    if (delayMs <= 0) return this.add(key);
    const at = this.clock.now() + delayMs;
    const pending = this.timers.get(key);
    if (pending !== undefined && pending.at <= at) return;
    if (pending !== undefined) this.clock.clearTimeout(pending.timer);
    const timer = this.clock.setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(key, { at, timer });
  }

  /** Queue a key after the rate limiter's delay for it (a retry); returns the delay. */
  addRateLimited(key: string): number {
    if (this.closed) return 0;
    const delay = this.limiter.when(key);
    this.metrics?.retried();
    this.addAfter(key, delay);
    return delay;
  }

  /** Forget the failure history of a key (after a success). */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  /** How often the key failed in a row. */
  failuresOf(key: string): number {
    return this.limiter.retries(key);
  }

  /** The next key to process; undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.metrics?.depth(this.queue.length);
      this.take(key);
      return Promise.resolve(key);
    }
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The worker finished the key; a dirty key goes back into the queue. */
  done(key: string): void {
    const startedAt = this.processing.get(key);
    if (startedAt === undefined) return;
    this.processing.delete(key);
    this.metrics?.worked((this.clock.now() - startedAt) / 1000);
    this.metrics?.inFlight(this.processing.size);
    if (this.dirty.delete(key)) this.add(key); // counted, and timed, from when it was marked dirty
  }

  /** Stop handing out keys; waiting workers get undefined. */
  shutDown(): void {
    this.closed = true;
    for (const { timer } of this.timers.values()) this.clock.clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }

  /** Whether `key` waits, is being processed (or marked to run again) or is scheduled for later. */
  holds(key: string): boolean {
    return this.queued.has(key) || this.processing.has(key) || this.dirty.has(key) || this.timers.has(key);
  }

  /** Keys waiting (not counting delayed or in-flight ones). */
  get length(): number {
    return this.queue.length;
  }

  /** Keys being processed right now. */
  get inFlight(): number {
    return this.processing.size;
  }

  /** Keys waiting for a delay (retries and requeues). */
  get delayed(): number {
    return this.timers.size;
  }

  private take(key: string): void {
    const now = this.clock.now();
    const addedAt = this.addedAt.get(key);
    this.addedAt.delete(key);
    if (addedAt !== undefined) this.metrics?.queued((now - addedAt) / 1000);
    this.processing.set(key, now);
    this.metrics?.inFlight(this.processing.size);
  }
}
