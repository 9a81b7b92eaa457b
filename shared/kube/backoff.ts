import { setTimeout as sleepTimer } from 'node:timers/promises';

export interface BackoffOptions {
  /** First delay after a failure. */
  initialMs: number;
  /** Cap for the doubling delay. */
  maxMs: number;
  /** Random extra up to this fraction of the delay (0 for none). */
  jitter?: number;
}

/** The delay before retry number `attempt` (0 for the first): initial, doubling, at most max; no jitter. */
export function doublingDelay(options: Pick<BackoffOptions, 'initialMs' | 'maxMs'>, attempt: number): number {
  return Math.min(options.maxMs, options.initialMs * 2 ** Math.min(Math.max(attempt, 0), 30));
}

/** Capped exponential backoff: initial, doubling up to max; reset() after a success. */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly options: BackoffOptions,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next attempt, then advances. */
  next(): number {
    const base = doublingDelay(this.options, this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    return Math.round(base * (1 + (this.options.jitter ?? 0) * this.random()));
  }

  reset(): void {
    this.attempt = 0;
  }

  /** Failures since the last reset. */
  get failures(): number {
    return this.attempt;
  }
}

/** Sleep that ends early (without throwing) when the signal aborts. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return;
  try {
    await sleepTimer(ms, undefined, signal ? { signal } : undefined);
  } catch (err: unknown) {
    if (!signal?.aborted) throw err;
  }
}

/** Resolves once the signal aborts (at once when it already has). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}
