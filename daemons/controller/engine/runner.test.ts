import { describe, expect, it } from '@jest/globals';
import { ConflictError, KubeApiError, NotFoundError } from '../../../shared/errors/index.js';
import { Runner, type ReconcileOutcome } from './runner.js';

function runnerWith(reconcile: (key: string) => Promise<{ requeueAfterMs?: number } | void>): { runner: Runner; outcomes: ReconcileOutcome[]; abort: AbortController } {
  const abort = new AbortController();
  const outcomes: ReconcileOutcome[] = [];
  const runner = new Runner({ name: 't', workers: 2, reconcile, signal: abort.signal, queue: { baseDelayMs: 5, maxDelayMs: 50 }, observe: (_c, o) => outcomes.push(o) });
  return { runner, outcomes, abort };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
}

describe('Runner', () => {
  it('requeues a conflicted key quietly until the reconcile succeeds', async () => {
    let calls = 0;
    const { runner, outcomes } = runnerWith(() => (++calls < 3 ? Promise.reject(new ConflictError('stale')) : Promise.resolve()));
    runner.start().enqueue('ns/a');
    await until(() => outcomes.includes('ok'));
    expect(outcomes).toEqual(['conflict', 'conflict', 'ok']);
    await runner.stop();
  });

  it('retries a failing key with backoff and counts the failures as errors', async () => {
    let calls = 0;
    const { runner, outcomes } = runnerWith(() => (++calls < 3 ? Promise.reject(new KubeApiError('boom', 500)) : Promise.resolve()));
    runner.start().enqueue('ns/a');
    await until(() => outcomes.includes('ok'));
    expect(outcomes).toEqual(['error', 'error', 'ok']);
    await runner.stop();
  });

  it('takes a vanished object as gone, not as an error', async () => {
    const { runner, outcomes } = runnerWith(() => Promise.reject(new NotFoundError('gone')));
    runner.start().enqueue('ns/a');
    await until(() => outcomes.length >= 1);
    expect(outcomes[0]).toBe('gone');
    await runner.stop();
  });

  it('never runs two reconciles of one key at once', async () => {
    let running = 0;
    let overlap = false;
    let calls = 0;
    const { runner } = runnerWith(async () => {
      running++;
      if (running > 1) overlap = true;
      calls++;
      await new Promise((r) => setTimeout(r, 20));
      running--;
    });
    runner.start();
    for (let i = 0; i < 5; i++) {
      runner.enqueue('ns/a');
      await new Promise((r) => setTimeout(r, 5));
    }
    await until(() => calls >= 2 && running === 0);
    expect(overlap).toBe(false);
    await runner.stop();
  });

  it('requeues after the delay a reconcile asks for, and stops handing out keys once aborted', async () => {
    let calls = 0;
    const { runner, abort } = runnerWith(() => {
      calls++;
      return Promise.resolve({ requeueAfterMs: 10 });
    });
    runner.start().enqueue('ns/a');
    await until(() => calls >= 3);
    abort.abort();
    await runner.stop();
    const after = calls;
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toBe(after);
  });
});
