import { describe, expect, it } from '@jest/globals';
import { ConflictError, KubeApiError, NotFoundError } from '../../../shared/errors/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { Runner, type ReconcileOutcome } from './runner.js';

function runnerWith(reconcile: (key: string) => Promise<{ requeueAfterMs?: number } | void>): {
  runner: Runner;
  outcomes: ReconcileOutcome[];
  abort: AbortController;
} {
  const abort = new AbortController();
  const outcomes: ReconcileOutcome[] = [];
  const runner = new Runner({
    name: 't',
    workers: 2,
    reconcile,
    signal: abort.signal,
    queue: { baseDelayMs: 5, maxDelayMs: 50 },
    observe: (_c, o) => outcomes.push(o),
  });
  return { runner, outcomes, abort };
}

describe('Runner', () => {
  it('requeues a conflicted key quietly until the reconcile succeeds', async () => {
    let calls = 0;
    const { runner, outcomes } = runnerWith(() => (++calls < 3 ? Promise.reject(new ConflictError('stale')) : Promise.resolve()));
    runner.start().enqueue('ns/a');
    await waitFor('a successful reconcile', () => outcomes.includes('ok'));
    expect(outcomes).toEqual(['conflict', 'conflict', 'ok']);
    await runner.stop();
  });

  it('retries a failing key with backoff and counts the failures as errors', async () => {
    let calls = 0;
    const { runner, outcomes } = runnerWith(() => (++calls < 3 ? Promise.reject(new KubeApiError('boom', 500)) : Promise.resolve()));
    runner.start().enqueue('ns/a');
    await waitFor('a successful reconcile', () => outcomes.includes('ok'));
    expect(outcomes).toEqual(['error', 'error', 'ok']);
    await runner.stop();
  });

  it('takes a vanished object as gone, not as an error', async () => {
    const { runner, outcomes } = runnerWith(() => Promise.reject(new NotFoundError('gone')));
    runner.start().enqueue('ns/a');
    await waitFor('a reconcile', () => outcomes.length >= 1);
    expect(outcomes[0]).toBe('gone');
    await runner.stop();
  });

  it('never runs two reconciles of one key at once: adds meanwhile make exactly one more run afterwards', async () => {
    let running = 0;
    let overlap = false;
    const finish: (() => void)[] = [];
    const { runner } = runnerWith(async () => {
      running++;
      if (running > 1) overlap = true;
      await new Promise<void>((resolve) => finish.push(resolve));
      running--;
    });
    runner.start().enqueue('ns/a');
    await waitFor('the first reconcile', () => finish.length === 1);
    for (let i = 0; i < 4; i++) runner.enqueue('ns/a'); // while it runs, with a second worker idle
    finish[0]?.();
    await waitFor('the second reconcile', () => finish.length === 2);
    expect(overlap).toBe(false);
    finish[1]?.();
    await runner.stop();
    expect([finish.length, running, overlap]).toEqual([2, 0, false]);
  });

  it('requeues after the delay a reconcile asks for, and stops handing out keys once aborted', async () => {
    let calls = 0;
    const { runner, abort } = runnerWith(() => {
      calls++;
      return Promise.resolve({ requeueAfterMs: 10 });
    });
    runner.start().enqueue('ns/a');
    await waitFor('three reconciles', () => calls >= 3);
    abort.abort();
    await runner.stop();
    // The workers have ended and the queue takes nothing more: no reconcile can follow.
    const after = calls;
    runner.enqueue('ns/b');
    expect([runner.queue.length, runner.queue.inFlight, await runner.queue.get()]).toEqual([0, 0, undefined]);
    expect(calls).toBe(after);
  });
});
