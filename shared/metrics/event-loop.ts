/**
 * The event-loop delay gauges of the process metrics, sampled every EVENT_LOOP_SAMPLE_MS instead of
 * prom-client's 10 ms. prom-client's monitor is a timer that wakes an idle process 100 times a second
 * (the audit function idle: ~115 wake-ups and 4-18 ms of CPU a second; with this monitor ~10 and
 * ~2 ms: functions/audit/README.md, issue 17). Its resolution cannot simply be raised: every sample
 * node's monitor records is the whole interval between two timer callbacks, so at 100 ms an idle
 * process would report a lag of 100 ms. These gauges keep prom-client's names and help and report
 * how late each sample ran: the delay beyond the interval (~0 when the loop is idle, where prom-client
 * reported its 10 ms interval; a 300 ms stall reads 0.2-0.3 s).
 */
import { createHistogram, performance } from 'node:perf_hooks';
import { Gauge, type Registry as PromRegistry } from 'prom-client';

/** How often (ms) the event-loop delay is sampled; a 15 s scrape sees ~150 samples. */
export const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * The resolution handed to prom-client's own monitor, whose gauges are replaced here: so long (the
 * largest timer libuv takes, ~24.8 days) that its timer, which is unref'd, never fires.
 */
export const REPLACED_MONITOR_MS = 2 ** 31 - 1;

/** The clock and the repeating timer of the sampler: the real ones, or a test's that it steps by hand. */
export interface SampleTimer {
  now(): number;
  /** Call `tick` every `ms`, without keeping the process alive. */
  every(ms: number, tick: () => void): void;
}

const realTimer: SampleTimer = {
  now: () => performance.now(),
  every: (ms, tick) => setInterval(tick, ms).unref(),
};

type Stat = 'min' | 'max' | 'mean' | 'stddev' | 'p50' | 'p90' | 'p99';

const HELP: Readonly<Record<Stat, string>> = {
  min: 'The minimum recorded event loop delay.',
  max: 'The maximum recorded event loop delay.',
  mean: 'The mean of the recorded event loop delays.',
  stddev: 'The standard deviation of the recorded event loop delays.',
  p50: 'The 50th percentile of the recorded event loop delays.',
  p90: 'The 90th percentile of the recorded event loop delays.',
  p99: 'The 99th percentile of the recorded event loop delays.',
};

const STATS = Object.keys(HELP) as Stat[];

export const eventLoopDelayName = (stat: Stat): string => `nodejs_eventloop_lag_${stat}_seconds`;

/**
 * Replace prom-client's event-loop delay gauges in `registry` (registered by `collectDefaultMetrics`
 * with REPLACED_MONITOR_MS) with the same names fed by an unref'd timer every `sampleMs` that records
 * how late it ran. As with prom-client, each scrape reports the samples since the previous one; a
 * scrape that finds no new sample (scrapes closer together than `sampleMs`) keeps the previous values.
 * Unlike node's monitor, whose reset also restarts its clock (the first interval after every scrape
 * was never measured, so a stall starting then went unseen), the clock here runs on across scrapes.
 */
export function replaceEventLoopDelayGauges(registry: PromRegistry, sampleMs: number = EVENT_LOOP_SAMPLE_MS, timer: SampleTimer = realTimer): void {
  const histogram = createHistogram();
  let last = timer.now();
  timer.every(sampleMs, () => {
    const now = timer.now();
    // Nanoseconds beyond the interval; the histogram takes integers from 1.
    histogram.record(Math.max(1, Math.round((now - last - sampleMs) * 1e6)));
    last = now;
  });
  const gauges = new Map<Stat, Gauge>();
  const read: Readonly<Record<Stat, () => number>> = {
    min: () => histogram.min,
    max: () => histogram.max,
    mean: () => histogram.mean,
    stddev: () => histogram.stddev,
    p50: () => histogram.percentile(50),
    p90: () => histogram.percentile(90),
    p99: () => histogram.percentile(99),
  };
  const collect = (): void => {
    if (histogram.count === 0) return;
    for (const stat of STATS) gauges.get(stat)?.set(read[stat]() / 1e9);
    histogram.reset();
  };
  for (const stat of STATS) {
    const name = eventLoopDelayName(stat);
    registry.removeSingleMetric(name);
    // One gauge (the first) reads the histogram for all of them, as prom-client does.
    gauges.set(stat, new Gauge({ name, help: HELP[stat], registers: [registry], ...(stat === 'min' ? { collect } : {}) }));
  }
}
