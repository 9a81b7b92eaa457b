/**
 * The runner's retries and metrics on a fake clock: every delay is the limiter's, observed by moving
 * time by hand (no real sleeps).
 */
import { describe, expect, it } from '@jest/globals';
import { ConflictError, KubeApiError, NotFoundError } from '../../../shared/errors/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { ControllerMetrics } from '../metrics/runtime.js';
import { FakeClock } from './fake-clock.js';
import { controllerRateLimiter } from './rate-limit.js';
import { Runner, type ReconcileFn, type RunnerOptions } from './runner.js';

interface Rig {
  runner: Runner;
  clock: FakeClock;
  /** Clock readings at which each reconcile started, per key. */
  calls: Map<string, number[]>;
  /** The runner has nothing in flight and nothing waiting: only delayed keys remain. */
  settled: () => Promise<void>;
}

function rig(reconcile: (key: string, clock: FakeClock) => ReturnType<ReconcileFn>, options: Partial<RunnerOptions> = {}): Rig {
  const clock = new FakeClock();
  const calls = new Map<string, number[]>();
  const abort = new AbortController();
  const runner = new Runner({
    name: 't',
    workers: 1,
    signal: abort.signal,
    clock,
    queue: { rateLimiter: controllerRateLimiter({ clock, random: () => 0 }) },
    reconcile: (key) => {
      calls.set(key, [...(calls.get(key) ?? []), clock.now()]);
      return reconcile(key, clock);
    },
    ...options,
  });
  const settled = (): Promise<void> =>
    waitFor('the runner to settle', () => runner.queue.inFlight === 0 && runner.queue.length === 0, { intervalMs: 1 }).then(() => undefined);
  return { runner, clock, calls, settled };
}

/** Move the clock `ms` at a time, letting the runner settle after each step. */
async function advance(r: Rig, ...steps: number[]): Promise<void> {
  for (const ms of steps) {
    r.clock.advance(ms);
    await r.settled();
  }
}

describe('Runner retries', () => {
  it('retries a key whose dependency is gone with exponential backoff from 5 ms, not every 100 ms forever', async () => {
    const r = rig(() => Promise.reject(new NotFoundError('the class is gone')));
    r.runner.start().enqueue('ns/a');
    await r.settled();
    expect(r.clock.pending()).toEqual([5]);
    await advance(r, 4);
    expect(r.calls.get('ns/a')).toEqual([0]);
    await advance(r, 1, 10, 20, 40, 80);
    expect(r.calls.get('ns/a')).toEqual([0, 5, 15, 35, 75, 155]);
    expect(r.clock.pending()).toEqual([160]);
    expect(r.runner.queue.failuresOf('ns/a')).toBe(6);
    await r.runner.stop();
  });

  it('caps the delay of a key that keeps failing, and starts again from the base after a success', async () => {
    let failing = true;
    const r = rig(() => (failing ? Promise.reject(new KubeApiError('boom', 500)) : Promise.resolve()), {
      queue: { baseDelayMs: 5, maxDelayMs: 40, qps: 1000 },
    });
    r.runner.start().enqueue('ns/a');
    await r.settled();
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      const [delay = 0] = r.clock.pending();
      delays.push(delay);
      await advance(r, delay);
    }
    expect(delays.map((d) => Math.min(d, 40))).toEqual(delays); // jittered, never beyond the cap
    expect(delays.slice(-2).every((d) => d === 40)).toBe(true);
    failing = false;
    await advance(r, r.clock.pending()[0] ?? 0);
    expect(r.clock.pending()).toEqual([]); // succeeded: nothing more is due
    failing = true;
    r.runner.enqueue('ns/a');
    await r.settled();
    expect(r.clock.pending()[0]).toBeLessThanOrEqual(6); // 5 ms and its jitter again
    await r.runner.stop();
  });

  it('spaces the retries of many failing keys by the overall bucket', async () => {
    const clock = new FakeClock();
    const r = rig(() => Promise.reject(new ConflictError('stale')), {
      clock,
      queue: { rateLimiter: controllerRateLimiter({ clock, random: () => 0, qps: 10, burst: 1 }) },
    });
    r.runner.start();
    for (const key of ['ns/a', 'ns/b', 'ns/c']) r.runner.enqueue(key);
    await r.settled();
    expect(clock.pending()).toEqual([5, 100, 200]);
    await r.runner.stop();
  });

  it('requeues after exactly the delay a reconcile asks for, outside the limiter', async () => {
    const r = rig(() => Promise.resolve({ requeueAfterMs: 10_000 }));
    r.runner.start().enqueue('ns/a');
    await r.settled();
    await advance(r, 9_999);
    expect(r.calls.get('ns/a')).toEqual([0]);
    await advance(r, 1);
    expect(r.calls.get('ns/a')).toEqual([0, 10_000]);
    expect(r.runner.queue.failuresOf('ns/a')).toBe(0);
    await r.runner.stop();
  });
});

describe('Runner metrics', () => {
  it('reports queue depth, adds, retries, queue and work time, active workers and reconcile results', async () => {
    const metrics = new ControllerMetrics();
    const finish: (() => void)[] = [];
    const r = rig(
      (key, clock) => {
        if (key === 'ns/bad') return Promise.reject(new KubeApiError('boom', 500));
        return new Promise<void>((resolve) => finish.push(() => (clock.advance(250), resolve())));
      },
      { queueMetrics: metrics.queueMetrics('t', 1), observe: metrics.observe },
    );
    r.runner.start().enqueue('ns/a'); // taken at once by the only worker
    r.runner.enqueue('ns/b');
    r.runner.enqueue('ns/bad');
    const text = (): Promise<string> => metrics.registry.expose();
    expect(await text()).toContain('workqueue_depth{name="t"} 2\n');
    expect(await text()).toContain('controller_runtime_active_workers{controller="t"} 1\n');
    await waitFor('a started', () => finish.length === 1);
    r.clock.advance(100);
    finish[0]?.();
    await waitFor('b started', () => finish.length === 2);
    finish[1]?.();
    await r.settled();

    const out = await text();
    expect(out).toContain('workqueue_depth{name="t"} 0\n');
    expect(out).toContain('workqueue_adds_total{name="t"} 3\n');
    expect(out).toContain('workqueue_retries_total{name="t"} 1\n');
    expect(out).toContain('workqueue_queue_duration_seconds_count{name="t"} 3\n');
    // a is taken at 0 and done at 350 (100 waited + 250 of work); b is taken then and done at 600;
    // bad is taken at 600 and fails at once.
    expect(out).toContain('workqueue_queue_duration_seconds_sum{name="t"} 0.95\n'); // 0 + 0.35 + 0.6
    expect(out).toContain('workqueue_work_duration_seconds_sum{name="t"} 0.6\n'); // 0.35 + 0.25 + 0
    expect(out).toContain('controller_runtime_active_workers{controller="t"} 0\n');
    expect(out).toContain('controller_runtime_max_concurrent_reconciles{controller="t"} 1\n');
    expect(out).toContain('controller_runtime_reconcile_total{controller="t",result="success"} 2\n');
    expect(out).toContain('controller_runtime_reconcile_total{controller="t",result="error"} 1\n');
    expect(out).toContain('controller_runtime_reconcile_errors_total{controller="t"} 1\n');
    expect(out).toContain('controller_runtime_reconcile_time_seconds_count{controller="t"} 3\n');
    await r.runner.stop();
  });
});
