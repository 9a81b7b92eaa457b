import type { ServerResponse } from 'node:http';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from '@jest/globals';
import { Drain } from './drain.js';

/** A full collection on demand (`gc` is exposed to contexts made after the flag is set). */
function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

const oldSpaceUsed = (): number => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')?.space_used_size ?? 0;

/** Runs `work` and returns the old generation's growth in bytes and how many mark-compacts ran meanwhile. */
async function oldGenerationGrowth(work: () => void): Promise<{ bytes: number; markCompacts: number }> {
  const gc = fullGc();
  gc();
  gc();
  let markCompacts = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) markCompacts += 1;
  });
  observer.observe({ entryTypes: ['gc'] });
  const before = oldSpaceUsed();
  work();
  const bytes = oldSpaceUsed() - before;
  // GC entries are delivered asynchronously.
  await new Promise((resolve) => setImmediate(resolve));
  observer.disconnect();
  return { bytes, markCompacts };
}

const response = (): ServerResponse => ({ setHeader: () => undefined }) as unknown as ServerResponse;

describe('Drain', () => {
  it('counts the requests in flight, reusing the slots of released ones', () => {
    const drain = new Drain();
    const a = drain.track(response());
    const b = drain.track(response());
    expect(drain.requestsInFlight).toBe(2);
    drain.release(a);
    expect(drain.requestsInFlight).toBe(1);
    expect(drain.track(response())).toBe(a);
    drain.release(b);
    expect([drain.requestsInFlight, drain.inFlight]).toEqual([1, 1]);
  });

  // One request at a time (the paced admission bench at 1,000/s): a Set of responses emptied by every
  // request got a new hash table in the old generation each time, ~120 bytes a request, so the old
  // generation filled and mark-compacts paused the function every few seconds.
  it('leaves no garbage in the old generation for a request tracked and released', async () => {
    const drain = new Drain();
    for (let i = 0; i < 1_000; i++) drain.release(drain.track(response()));
    const requests = 100_000;
    const growth = await oldGenerationGrowth(() => {
      for (let i = 0; i < requests; i++) drain.release(drain.track(response()));
    });
    // A mark-compact would have collected the garbage this measures: none may have run.
    expect(growth.markCompacts).toBe(0);
    expect(growth.bytes / requests).toBeLessThan(5);
  });
});
