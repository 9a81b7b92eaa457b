import { describe, expect, it, jest } from '@jest/globals';
import { WorkQueue } from './queue.js';

describe('WorkQueue', () => {
  it('hands out a key once however often it was added while waiting', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
  });

  it('never gives a key in process to a second worker; an add meanwhile requeues it after done', async () => {
    const q = new WorkQueue();
    q.add('a');
    const key = await q.get();
    q.add('a');
    expect(q.length).toBe(0);
    q.done(key ?? '');
    expect(q.length).toBe(1);
    expect(await q.get()).toBe('a');
  });

  it('wakes a waiting worker when a key arrives', async () => {
    const q = new WorkQueue();
    const waiting = q.get();
    q.add('x');
    expect(await waiting).toBe('x');
    expect(q.inFlight).toBe(1);
  });

  it('grows the retry delay per failure of a key and forgets it after a success', () => {
    const q = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 1000 });
    const first = q.addRateLimited('a');
    const second = q.addRateLimited('a');
    expect(first).toBeGreaterThanOrEqual(10);
    expect(second).toBeGreaterThanOrEqual(20);
    expect(q.failuresOf('a')).toBe(2);
    q.forget('a');
    expect(q.failuresOf('a')).toBe(0);
    q.shutDown();
  });

  it('delivers a delayed key once its delay has passed, keeping the earliest of two delays', async () => {
    jest.useFakeTimers({ now: 0 });
    try {
      const q = new WorkQueue();
      q.addAfter('a', 1000);
      q.addAfter('a', 20); // earlier: replaces the 1000
      q.addAfter('b', 20);
      q.addAfter('b', 1000); // later: ignored
      jest.advanceTimersByTime(19);
      expect(q.length).toBe(0);
      jest.advanceTimersByTime(1);
      expect(q.length).toBe(2);
      expect([await q.get(), await q.get()]).toEqual(['a', 'b']);
      q.done('a');
      q.done('b');
      jest.advanceTimersByTime(1000);
      expect(q.length).toBe(0);
      q.shutDown();
    } finally {
      jest.useRealTimers();
    }
  });

  it('holds a key while it waits, is processed or marked again, or is scheduled, and not after', async () => {
    jest.useFakeTimers({ now: 0 });
    try {
      const q = new WorkQueue();
      expect(q.holds('a')).toBe(false);
      q.add('a');
      expect(q.holds('a')).toBe(true);
      const key = (await q.get()) ?? '';
      expect(q.holds('a')).toBe(true);
      q.add('a'); // dirty while in process
      q.done(key);
      expect(q.holds('a')).toBe(true);
      q.done((await q.get()) ?? '');
      expect(q.holds('a')).toBe(false);
      q.addAfter('a', 50);
      expect([q.holds('a'), q.holds('b')]).toEqual([true, false]);
      jest.advanceTimersByTime(50);
      q.done((await q.get()) ?? '');
      expect(q.holds('a')).toBe(false);
      q.shutDown();
    } finally {
      jest.useRealTimers();
    }
  });

  it('answers undefined to waiting workers after shutdown', async () => {
    const q = new WorkQueue();
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
    q.add('late');
    expect(await q.get()).toBeUndefined();
  });
});
