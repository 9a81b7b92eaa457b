import type { Clock, TimerHandle } from './clock.js';

/** A clock for tests: time moves only in advance(), which fires due timers in order. */
export class FakeClock implements Clock {
  private ms = 0;
  private nextId = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.ms;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { at: this.ms + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** Move time forward by `ms`, firing every timer that falls due, earliest first. */
  advance(ms: number): void {
    const until = this.ms + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers) if (entry[1].at <= until && (next === undefined || entry[1].at < next[1].at)) next = entry;
      if (next === undefined) break;
      this.timers.delete(next[0]);
      this.ms = next[1].at;
      next[1].fn();
    }
    this.ms = until;
  }

  /** Timers waiting to fire, as delays from now. */
  pending(): number[] {
    return [...this.timers.values()].map((t) => t.at - this.ms).sort((a, b) => a - b);
  }
}
