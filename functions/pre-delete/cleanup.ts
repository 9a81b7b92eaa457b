/**
 * The clean-up itself, free of transport: delete every target, then wait until each is gone (its
 * finalizers done) or the one deadline passes. Targets run in parallel, as in the original.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeApiError, errorMessage } from '../../shared/errors/index.js';
import type { Target } from './config.js';

/** The two calls the clean-up makes; the real one talks to the apiserver (kube-store.ts). */
export interface TargetStore {
  /** Request deletion; false when the object did not exist. */
  delete(target: Target, signal: AbortSignal): Promise<boolean>;
  /** Whether the object still exists (deletion requested or not). */
  exists(target: Target, signal: AbortSignal): Promise<boolean>;
}

export interface Clock {
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const realClock: Clock = { now: () => Date.now(), sleep: (ms, signal) => sleep(ms, undefined, { signal }) };

export type Outcome =
  | { readonly state: 'absent' }
  | { readonly state: 'deleted'; readonly afterMs: number }
  | { readonly state: 'timeout'; readonly lastError?: string }
  | { readonly state: 'failed'; readonly error: string };

export interface TargetResult {
  readonly target: Target;
  readonly outcome: Outcome;
}

export interface CleanupReport {
  /** Every target is gone: it did not exist, or it was deleted and disappeared in time. */
  readonly ok: boolean;
  readonly elapsedMs: number;
  readonly results: readonly TargetResult[];
}

export interface CleanupOptions {
  readonly timeoutMs: number;
  readonly pollMs: number;
  readonly signal?: AbortSignal;
  readonly clock?: Clock;
}

/** Answers that retrying cannot change (bad request, no permission, method not allowed...). */
function isPermanent(err: unknown): boolean {
  return err instanceof KubeApiError && err.status >= 400 && err.status < 500 && err.status !== 409 && err.status !== 429;
}

export async function deleteAndWait(targets: readonly Target[], store: TargetStore, options: CleanupOptions): Promise<CleanupReport> {
  const clock = options.clock ?? realClock;
  const signal = options.signal ?? new AbortController().signal;
  const started = clock.now();
  const deadline = started + options.timeoutMs;
  const run = new TargetRun(store, clock, signal, deadline, options.pollMs);
  const results = await Promise.all(targets.map(async (target) => ({ target, outcome: await run.clean(target) })));
  const ok = results.every((r) => r.outcome.state === 'absent' || r.outcome.state === 'deleted');
  return { ok, elapsedMs: clock.now() - started, results };
}

/** One target's life: delete (retrying transient failures), then poll until gone. */
class TargetRun {
  constructor(
    private readonly store: TargetStore,
    private readonly clock: Clock,
    private readonly signal: AbortSignal,
    private readonly deadline: number,
    private readonly pollMs: number,
  ) {}

  async clean(target: Target): Promise<Outcome> {
    const started = this.clock.now();
    const requested = await this.attempt(() => this.store.delete(target, this.signal));
    if (requested.kind === 'error') return requested.outcome;
    if (!requested.value) return { state: 'absent' };
    for (;;) {
      const present = await this.attempt(() => this.store.exists(target, this.signal));
      if (present.kind === 'error') return present.outcome;
      if (!present.value) return { state: 'deleted', afterMs: this.clock.now() - started };
      if (!(await this.pause())) return this.stopped();
    }
  }

  /** One call, repeated after transient failures until it answers or the deadline passes. */
  private async attempt(call: () => Promise<boolean>): Promise<{ kind: 'value'; value: boolean } | { kind: 'error'; outcome: Outcome }> {
    for (;;) {
      try {
        return { kind: 'value', value: await call() };
      } catch (err: unknown) {
        if (isPermanent(err)) return { kind: 'error', outcome: { state: 'failed', error: errorMessage(err) } };
        if (!(await this.pause())) return { kind: 'error', outcome: this.stopped(errorMessage(err)) };
      }
    }
  }

  /** Why waiting ended early: the caller gave up (aborted), or the deadline passed. */
  private stopped(lastError?: string): Outcome {
    if (this.signal.aborted) return { state: 'failed', error: 'aborted before the objects were gone' };
    return lastError === undefined ? { state: 'timeout' } : { state: 'timeout', lastError };
  }

  /** Wait one poll interval (less near the deadline); false once the deadline has passed. */
  private async pause(): Promise<boolean> {
    const left = this.deadline - this.clock.now();
    if (left <= 0 || this.signal.aborted) return false;
    try {
      await this.clock.sleep(Math.min(this.pollMs, left), this.signal);
    } catch {
      return false;
    }
    return true;
  }
}
