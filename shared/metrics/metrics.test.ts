import { describe, expect, it } from '@jest/globals';
import { waitFor } from '../testing/wait.js';
import { Registry as PromRegistry } from 'prom-client';
import { EVENT_LOOP_SAMPLE_MS, replaceEventLoopDelayGauges } from './event-loop.js';
import { MetricDefinitionError, Registry, type Gauge } from './index.js';

describe('metrics registry', () => {
  it('exposes a labelled counter in the Prometheus text format', async () => {
    const registry = new Registry();
    const requests = registry.counter({ name: 'http_requests_total', help: 'Requests.', labelNames: ['route', 'status'] });
    requests.inc({ route: '/', status: '200' });
    requests.inc({ route: '/', status: '200' }, 2);
    requests.inc({ route: '/x', status: '404' });

    expect(await registry.expose()).toBe(
      '# HELP http_requests_total Requests.\n' +
        '# TYPE http_requests_total counter\n' +
        'http_requests_total{route="/",status="200"} 3\n' +
        'http_requests_total{route="/x",status="404"} 1\n',
    );
  });

  it('exposes a label-less metric as zero before any update', async () => {
    const registry = new Registry();
    registry.gauge({ name: 'in_flight', help: 'In flight.' });
    expect(await registry.expose()).toContain('\nin_flight 0\n');
  });

  it('moves a gauge up and down and sets it', async () => {
    const registry = new Registry();
    const gauge = registry.gauge({ name: 'queue', help: 'Queue.', labelNames: ['q'] });
    gauge.inc({ q: 'a' }, 5);
    gauge.dec({ q: 'a' }, 2);
    gauge.set({ q: 'b' }, -1.5);
    expect([await gauge.get({ q: 'a' }), await gauge.get({ q: 'b' }), await gauge.get({ q: 'never' })]).toEqual([3, -1.5, 0]);
    expect(await registry.expose()).not.toContain('q="never"');
  });

  it('counts histogram observations into cumulative buckets with sum and count', async () => {
    const registry = new Registry();
    const latency = registry.histogram({ name: 'latency_seconds', help: 'Latency.', labelNames: ['route'], buckets: [0.1, 1] });
    for (const v of [0.05, 0.1, 0.5, 3]) latency.observe({ route: '/' }, v);

    expect(await registry.expose()).toBe(
      '# HELP latency_seconds Latency.\n' +
        '# TYPE latency_seconds histogram\n' +
        'latency_seconds_bucket{le="0.1",route="/"} 2\n' +
        'latency_seconds_bucket{le="1",route="/"} 3\n' +
        'latency_seconds_bucket{le="+Inf",route="/"} 4\n' +
        'latency_seconds_sum{route="/"} 3.65\n' +
        'latency_seconds_count{route="/"} 4\n',
    );
  });

  it('escapes quotes, backslashes and newlines in label values and help text', async () => {
    const registry = new Registry();
    registry.counter({ name: 'odd_total', help: 'line1\nline2 \\', labelNames: ['v'] }).inc({ v: 'a"b\\c\nd' });
    expect(await registry.expose()).toBe('# HELP odd_total line1\\nline2 \\\\\n# TYPE odd_total counter\nodd_total{v="a\\"b\\\\c\\nd"} 1\n');
  });

  it.each([
    ['a metric name with a dash', () => new Registry().counter({ name: 'bad-name', help: 'x' })],
    ['a reserved label name', () => new Registry().counter({ name: 'ok', help: 'x', labelNames: ['__x'] })],
    ['a histogram label named le', () => new Registry().histogram({ name: 'h', help: 'x', labelNames: ['le'] })],
    ['decreasing buckets', () => new Registry().histogram({ name: 'h', help: 'x', buckets: [1, 0.5] })],
    ['a label declared twice', () => new Registry().gauge({ name: 'g', help: 'x', labelNames: ['a', 'a'] })],
  ])('rejects %s', (_what, declare) => {
    expect(declare).toThrow(MetricDefinitionError);
  });

  it('rejects a second metric with the same name', () => {
    const registry = new Registry();
    registry.counter({ name: 'dup_total', help: 'x' });
    expect(() => registry.gauge({ name: 'dup_total', help: 'x' })).toThrow(/already registered/);
  });

  it('runs collect callbacks before each exposition', async () => {
    const registry = new Registry();
    let size = 0;
    const gauge: Gauge = registry.gauge({ name: 'cache_objects', help: 'Objects.', collect: (): void => gauge.set(undefined, size) });
    size = 7;
    expect(await registry.expose()).toContain('\ncache_objects 7\n');
    size = 9;
    expect(await registry.expose()).toContain('\ncache_objects 9\n');
  });

  it('adds the process metrics when asked (CPU, resident memory, heap, event loop lag)', async () => {
    const text = await new Registry({ processMetrics: true }).expose();
    const names = ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds'];
    for (const name of [...names, 'nodejs_eventloop_lag_max_seconds', 'nodejs_eventloop_lag_p99_seconds']) {
      expect(text).toContain(`\n# TYPE ${name} `);
    }
    expect(await new Registry().expose()).not.toContain('process_cpu_seconds_total');
  });

  it('reports an event-loop stall as the delay beyond the 100 ms sampling interval', async () => {
    // The sampler's clock and timer are stepped by hand: a tick 400 ms after the one before is a stall
    // of 300 ms beyond the interval, one on time is ~0.
    let now = 0;
    let tick: () => void = () => undefined;
    const prom = new PromRegistry();
    replaceEventLoopDelayGauges(prom, EVENT_LOOP_SAMPLE_MS, { now: () => now, every: (_ms, t) => (tick = t) });
    const stat = async (name: string): Promise<number> => Number(new RegExp(`\\n${name} (\\S+)\\n`).exec(await prom.metrics())?.[1]);
    for (const late of [0, 300, 0]) {
      now += EVENT_LOOP_SAMPLE_MS + late;
      tick();
    }
    expect(await stat('nodejs_eventloop_lag_max_seconds')).toBeCloseTo(0.3, 3);
    expect(await stat('nodejs_eventloop_lag_min_seconds')).toBeCloseTo(0, 6);
    // Each scrape reports the samples since the one before: one on time, and the stall is gone.
    now += EVENT_LOOP_SAMPLE_MS;
    tick();
    expect(await stat('nodejs_eventloop_lag_max_seconds')).toBeCloseTo(0, 6);
  });

  it('samples the real event loop once the process metrics are on', async () => {
    const registry = new Registry({ processMetrics: true });
    // Before the first sample the gauges read 0; a sample records at least 1 ns.
    await waitFor('an event-loop sample', async () => Number(/\nnodejs_eventloop_lag_min_seconds (\S+)\n/.exec(await registry.expose())?.[1]) > 0);
  });

  it('rejects a missing label, an undeclared label and a negative counter increment', () => {
    const counter = new Registry().counter({ name: 'c_total', help: 'x', labelNames: ['a'] });
    expect(() => counter.inc()).toThrow(/label "a" missing/);
    expect(() => counter.inc({ a: '1', b: '2' } as { a: string })).toThrow(/unknown label "b"/);
    expect(() => counter.inc({ a: '1' }, -1)).toThrow(/cannot increase by -1/);
  });
});
