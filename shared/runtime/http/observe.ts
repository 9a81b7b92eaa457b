import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Counter, Gauge, Histogram, Registry } from '../../metrics/index.js';
import type { Drain } from '../drain.js';

type HttpLabel = 'route' | 'method' | 'status';

export interface HttpMetrics {
  readonly requests: Counter<HttpLabel>;
  readonly duration: Histogram<HttpLabel>;
  readonly inFlight: Gauge;
}

/** The host's request metrics, labelled by route pattern (never the raw path), method and status. */
export function httpMetrics(registry: Registry): HttpMetrics {
  const labelNames = ['route', 'method', 'status'] as const;
  return {
    requests: registry.counter({ name: 'http_requests_total', help: 'HTTP requests answered.', labelNames }),
    duration: registry.histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from request arrival to the end of the response.',
      labelNames,
    }),
    inFlight: registry.gauge({ name: 'http_requests_in_flight', help: 'HTTP requests being served.' }),
  };
}

/**
 * Count and time one request under its route label (`unmatched` for 404s) and register it with the
 * drain, all undone by one `close` listener.
 */
export function observe(metrics: HttpMetrics, drain: Drain, req: IncomingMessage, res: ServerResponse, route: string): void {
  const start = performance.now();
  metrics.inFlight.inc();
  drain.track(res);
  res.once('close', () => {
    drain.release(res);
    metrics.inFlight.dec();
    const labels = { route, method: req.method ?? 'GET', status: res.writableFinished ? String(res.statusCode) : 'aborted' };
    metrics.requests.inc(labels);
    metrics.duration.observe(labels, (performance.now() - start) / 1000);
  });
}
