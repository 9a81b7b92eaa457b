/**
 * The one wait-for-condition helper of the tests: poll until the probe returns something truthy and
 * return it. The deadline is generous on purpose (a busy 2-core CI machine): a test waits on what it
 * means, never on a fixed sleep, and the deadline only turns a hang into a clear failure.
 */
export interface WaitOptions {
  /** Give up after this long (default 30 s). */
  readonly timeoutMs?: number;
  /** Pause between probes (default 50 ms). */
  readonly intervalMs?: number;
  /** Checked before each probe: a reason stops the wait at once (e.g. the process being waited on exited). */
  readonly abortIf?: () => string | undefined;
}

export async function waitFor<T>(what: string, probe: () => T | Promise<T>, opts: WaitOptions = {}): Promise<Exclude<T, undefined | null | false | 0 | ''>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let lastError: unknown;
  for (;;) {
    const abort = opts.abortIf?.();
    if (abort !== undefined) throw new Error(`${what}: ${abort}`, { cause: lastError });
    try {
      const value = await probe();
      if (value) return value as Exclude<T, undefined | null | false | 0 | ''>;
      lastError = undefined;
    } catch (err: unknown) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
      throw new Error(`timed out waiting for ${what} (${opts.timeoutMs ?? 30_000} ms)${cause}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, opts.intervalMs ?? 50));
  }
}
