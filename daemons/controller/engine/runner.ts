import { ConflictError, NotFoundError } from '../../../shared/errors/index.js';
import { childLogger, type Logger } from '../../../shared/log/index.js';
import { WorkQueue, type WorkQueueOptions } from './queue.js';

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
  queue?: WorkQueueOptions;
  observe?: ReconcileObserver;
  logger?: Logger;
}

/** Delay before a key whose dependency vanished is looked at again. */
const GONE_RETRY_MS = 100;

/**
 * Runs one reconciler: a keyed queue and N workers. Conflicts requeue quickly and quietly, a vanished
 * object ends the key quietly, other errors requeue with per-key backoff and one warning line.
 */
export class Runner {
  readonly queue: WorkQueue;
  private readonly log: Logger;
  private workers: Promise<void>[] = [];

  constructor(private readonly options: RunnerOptions) {
    this.queue = new WorkQueue(options.queue);
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
    const started = performance.now();
    const outcome = await this.reconcileOnce(key);
    this.options.observe?.(this.options.name, outcome, (performance.now() - started) / 1000);
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
      if (err instanceof ConflictError) {
        this.log.debug({ object: key, err }, 'conflict, requeued');
        this.queue.addRateLimited(key);
        return 'conflict';
      }
      if (err instanceof NotFoundError) {
        this.log.debug({ object: key, err }, 'object gone during reconcile');
        this.queue.addAfter(key, GONE_RETRY_MS);
        return 'gone';
      }
      const delayMs = this.queue.addRateLimited(key);
      this.log.warn({ object: key, err, delayMs }, 'reconcile failed, requeued');
      return 'error';
    }
  }
}
