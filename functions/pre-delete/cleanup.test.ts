import { describe, expect, it } from '@jest/globals';
import { KubeApiError, UnavailableError } from '../../shared/errors/index.js';
import { deleteAndWait, type Clock, type TargetStore } from './cleanup.js';
import type { Target } from './config.js';
import { CleanupIncompleteError } from './report.js';

const target = (name: string): Target => ({ gvr: { group: 'g.example', version: 'v1', resource: 'things' }, namespace: 'ns', name });

/** How one fake object behaves: present or not, how many checks it survives after deletion, failures. */
interface Script {
  present: boolean;
  checksUntilGone?: number;
  deleteErrors?: Error[];
  existsErrors?: Error[];
}

class FakeStore implements TargetStore {
  readonly calls: string[] = [];
  constructor(private readonly scripts: Record<string, Script>) {}

  delete(t: Target): Promise<boolean> {
    this.calls.push(`delete ${t.name}`);
    const s = this.script(t);
    const err = s.deleteErrors?.shift();
    return err ? Promise.reject(err) : Promise.resolve(s.present);
  }

  exists(t: Target): Promise<boolean> {
    this.calls.push(`exists ${t.name}`);
    const s = this.script(t);
    const err = s.existsErrors?.shift();
    if (err) return Promise.reject(err);
    if (s.checksUntilGone === undefined) return Promise.resolve(true);
    s.present = s.checksUntilGone-- > 0;
    return Promise.resolve(s.present);
  }

  private script(t: Target): Script {
    const s = this.scripts[t.name];
    if (s === undefined) throw new Error(`no script for ${t.name}`);
    return s;
  }
}

/** Time advances only when the clean-up sleeps. */
function fakeClock(): Clock & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    sleep: (ms, signal) => {
      if (signal.aborted) return Promise.reject(new Error('aborted'));
      slept.push(ms);
      now += ms;
      return Promise.resolve();
    },
  };
}

const options = (clock: Clock, signal?: AbortSignal): { timeoutMs: number; pollMs: number; clock: Clock; signal?: AbortSignal } => ({
  timeoutMs: 10_000,
  pollMs: 2_000,
  clock,
  ...(signal ? { signal } : {}),
});

describe('deleting and waiting for the targets', () => {
  it('succeeds at once without waiting when there is nothing to delete', async () => {
    const clock = fakeClock();
    const report = await deleteAndWait([target('a'), target('b')], new FakeStore({ a: { present: false }, b: { present: false } }), options(clock));
    expect(report).toMatchObject({ ok: true, elapsedMs: 0 });
    expect(report.results.map((r) => r.outcome.state)).toEqual(['absent', 'absent']);
    expect(clock.slept).toEqual([]);
  });

  it('waits poll by poll until a deleted object is gone', async () => {
    const clock = fakeClock();
    const store = new FakeStore({ a: { present: true, checksUntilGone: 2 } });
    const report = await deleteAndWait([target('a')], store, options(clock));
    expect(report.results[0]?.outcome).toEqual({ state: 'deleted', afterMs: 4_000 });
    // Two polls of the full interval while the object was still there, and one deletion request.
    expect(clock.slept).toEqual([2_000, 2_000]);
    expect(store.calls.filter((c) => c === 'delete a')).toHaveLength(1);
  });

  it('fails with a timeout when a finalizer holds the object past the deadline, checking once more at the deadline', async () => {
    const clock = fakeClock();
    const store = new FakeStore({ a: { present: true } });
    const report = await deleteAndWait([target('a')], store, { ...options(clock), timeoutMs: 5_000 });
    expect(report).toMatchObject({ ok: false, elapsedMs: 5_000, results: [{ outcome: { state: 'timeout' } }] });
    expect(clock.slept).toEqual([2_000, 2_000, 1_000]);
    expect(store.calls.filter((c) => c === 'exists a')).toHaveLength(4);
  });

  it('waits for all targets in parallel: one stuck object does not hide that the other went', async () => {
    const store = new FakeStore({ stuck: { present: true }, quick: { present: true, checksUntilGone: 0 } });
    const report = await deleteAndWait([target('stuck'), target('quick')], store, options(fakeClock()));
    expect(report.ok).toBe(false);
    expect(report.results.map((r) => [r.target.name, r.outcome.state])).toEqual([
      ['stuck', 'timeout'],
      ['quick', 'deleted'],
    ]);
  });

  it('retries a delete that failed for a transient reason', async () => {
    const store = new FakeStore({ a: { present: true, checksUntilGone: 0, deleteErrors: [new UnavailableError('apiserver down')] } });
    const report = await deleteAndWait([target('a')], store, options(fakeClock()));
    expect(report.ok).toBe(true);
    expect(report.results[0]?.outcome.state).toBe('deleted');
    // The failed request was sent again (once: the second succeeded).
    expect(store.calls.filter((c) => c === 'delete a')).toHaveLength(2);
  });

  it('gives up at once on a permanent refusal such as 403, without retrying', async () => {
    const forbidden = new KubeApiError('delete things ns/a: forbidden', 403, 'Forbidden');
    const store = new FakeStore({ a: { present: true, deleteErrors: [forbidden] } });
    const report = await deleteAndWait([target('a')], store, options(fakeClock()));
    expect(report.results[0]?.outcome).toEqual({ state: 'failed', error: 'delete things ns/a: forbidden' });
    expect(store.calls).toEqual(['delete a']);
  });

  it('reports the last error when transient failures last until the deadline', async () => {
    const down = (): Error => new UnavailableError('connection refused');
    const store = new FakeStore({ a: { present: true, existsErrors: [down(), down(), down(), down(), down(), down(), down()] } });
    const report = await deleteAndWait([target('a')], store, options(fakeClock()));
    expect(report.results[0]?.outcome).toEqual({ state: 'timeout', lastError: 'connection refused' });
  });

  it('stops waiting as a failure when the caller aborts', async () => {
    const abort = new AbortController();
    abort.abort();
    const report = await deleteAndWait([target('a')], new FakeStore({ a: { present: true } }), options(fakeClock(), abort.signal));
    expect(report.results[0]?.outcome).toMatchObject({ state: 'failed' });
  });
});

describe('an incomplete clean-up as an error', () => {
  it('answers 504 for a passed deadline and 502 when a call failed, naming each object', () => {
    const timeout = { target: target('a'), outcome: { state: 'timeout' as const } };
    const failed = { target: target('b'), outcome: { state: 'failed' as const, error: 'forbidden' } };
    const late = new CleanupIncompleteError({ ok: false, elapsedMs: 1, results: [timeout] });
    const broken = new CleanupIncompleteError({ ok: false, elapsedMs: 1, results: [timeout, failed] });
    expect([late.status, broken.status, late.code]).toEqual([504, 502, 'PRE_DELETE_INCOMPLETE']);
    expect(broken.message).toBe(
      'pre-delete clean-up incomplete: things.g.example ns/a: still there at the deadline (finalizers not done); things.g.example ns/b: failed: forbidden',
    );
  });
});
