import { ConflictError, NotFoundError } from '../../../shared/errors/index.js';
import { childLogger, type Logger } from '../../../shared/log/index.js';
import { realClock, type Clock } from './clock.js';
import { WorkQueue, type WorkQueueMetrics, type WorkQueueOptions } from './queue.js';

/** What one reconcile asks for: nothing, or another look after a delay. */
export interface ReconcileResult {
  requeueAfterMs?: number | undefined;
}

export type ReconcileFn = (key: string, signal: AbortSignal) => Promise<ReconcileResult | void>;

/** Observes reconciles (metrics); outcome is ok, requeue, conflict, gone or error. */
export type ReconcileObserver = (controller: string, outcome: ReconcileOutcome, seconds: number) => void;
export type ReconcileOutcome = 'ok' | 'requeue' | 'conflict' | 'gone' | 'error' | 'aborted';

export interface RunnerOptions {
  name: string;
  workers: number;
  reconcile: ReconcileFn;
  signal: AbortSignal;
  /** Retry limits (default controller-runtime's: per key 5 ms .. 1000 s, 10/s with a burst of 100 overall). */
  queue?: Omit<WorkQueueOptions, 'clock' | 'metrics'>;
  /** The queue's metrics (workqueue_*), for this runner's name. */
  queueMetrics?: WorkQueueMetrics;
  observe?: ReconcileObserver;
  logger?: Logger;
  clock?: Clock;
}

/**
 * Runs one reconciler: a keyed queue and N workers. Every failure goes back through the queue's rate
 * limiter (exponential per key with jitter and a cap, and a bucket over all keys): a conflict and a
 * vanished dependency quietly, anything else with one warning line. A success forgets the key's
 * failures; a reconcile that asks for another look gets it after exactly that delay.
 */
export class Runner {
  readonly queue: WorkQueue;
  private readonly log: Logger;
  private readonly clock: Clock;
  private workers: Promise<void>[] = [];

  constructor(private readonly options: RunnerOptions) {
    this.clock = options.clock ?? realClock;
    this.queue = new WorkQueue({ ...options.queue, clock: this.clock, metrics: options.queueMetrics });
    this.log = options.logger ?? childLogger({ component: 'controller', controller: options.name });
    options.signal.addEventListener('abort', () => this.queue.shutDown(), { once: true });
  }

  get name(): string {
    return this.options.name;
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  start(): this {
    if (this.workers.length === 0 && !this.options.signal.aborted) {
      for (let i = 0; i < this.options.workers; i++) this.workers.push(this.work());
    }
    return this;
  }

  /** Stop handing out keys and wait for the reconciles in flight. */
  async stop(): Promise<void> {
    this.queue.shutDown();
    await Promise.all(this.workers);
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.process(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async process(key: string): Promise<void> {
    const started = this.clock.now();
    const outcome = await this.reconcileOnce(key);
    this.options.observe?.(this.options.name, outcome, (this.clock.now() - started) / 1000);
  }

  private async reconcileOnce(key: string): Promise<ReconcileOutcome> {
    const { signal } = this.options;
    try {
      const result = await this.options.reconcile(key, signal);
      this.queue.forget(key);
      if (result?.requeueAfterMs !== undefined) {
        this.queue.addAfter(key, result.requeueAfterMs);
        return 'requeue';
      }
      return 'ok';
    } catch (err: unknown) {
      if (signal.aborted) return 'aborted';
      const delayMs = this.queue.addRateLimited(key);
      const retries = this.queue.failuresOf(key);
      if (err instanceof ConflictError) {
        this.log.debug({ object: key, err, delayMs, retries }, 'conflict, requeued');
        return 'conflict';
      }
      if (err instanceof NotFoundError) {
        this.log.debug({ object: key, err, delayMs, retries }, 'something the reconcile needs is gone, requeued');
        return 'gone';
      }
      this.log.warn({ object: key, err, delayMs, retries }, 'reconcile failed, requeued');
      return 'error';
    }
  }
}
