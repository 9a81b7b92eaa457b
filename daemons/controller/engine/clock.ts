/** The time the work queue and its rate limiters run on: real in the daemon, FakeClock in tests. */
export interface Clock {
  /** Milliseconds (any epoch; only differences matter). */
  now(): number;
  /** Run `fn` after `ms`; the returned handle cancels it. Must not keep the process alive. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export type TimerHandle = unknown;

/** Node's clock and timers, looked up at each call (so jest's fake timers apply to it too). */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
