import { Backoff } from '../../../shared/kube/index.js';

export interface WorkQueueOptions {
  /** First retry delay after a failure; doubles per consecutive failure of the same key. */
  baseDelayMs?: number;
  /** Cap of the per-key retry delay. */
  maxDelayMs?: number;
}

/**
 * A keyed work queue with client-go semantics: a key waits in the queue at most once (dedup); a key
 * being processed is never handed to a second worker, and an add meanwhile marks it dirty so it is
 * queued again when the worker calls done(). Failed keys come back after a per-key exponential delay.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, Backoff>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private closed = false;

  constructor(private readonly options: WorkQueueOptions = {}) {}

  /** Queue a key now (no-op when it already waits). */
  add(key: string): void {
    if (this.closed) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      this.processing.add(key);
      waiter(key);
      return;
    }
    this.queued.add(key);
    this.queue.push(key);
  }

  /** Queue a key after a delay; an earlier pending delay for the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.closed) return;
    if (delayMs <= 0) return this.add(key);
    const at = Date.now() + delayMs;
    const pending = this.timers.get(key);
    if (pending !== undefined && pending.at <= at) return;
    if (pending !== undefined) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  /** Queue a key after its next backoff delay (failures of the key so far decide the delay). */
  addRateLimited(key: string): number {
    let backoff = this.failures.get(key);
    if (backoff === undefined) {
      backoff = new Backoff({ initialMs: this.options.baseDelayMs ?? 50, maxMs: this.options.maxDelayMs ?? 30_000, jitter: 0.1 });
      this.failures.set(key, backoff);
    }
    const delay = backoff.next();
    this.addAfter(key, delay);
    return delay;
  }

  /** Forget the failure history of a key (after a success). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** How often the key failed in a row. */
  failuresOf(key: string): number {
    return this.failures.get(key)?.failures ?? 0;
  }

  /** The next key to process; undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.processing.add(key);
      return Promise.resolve(key);
    }
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The worker finished the key; a dirty key goes back into the queue. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  /** Stop handing out keys; waiting workers get undefined. */
  shutDown(): void {
    this.closed = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }

  /** Keys waiting (not counting delayed or in-flight ones). */
  get length(): number {
    return this.queue.length;
  }

  /** Keys being processed right now. */
  get inFlight(): number {
    return this.processing.size;
  }
}
