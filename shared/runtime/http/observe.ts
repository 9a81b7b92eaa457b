import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Counter, Gauge, Histogram, Labels, Registry } from '../../metrics/index.js';
import type { Drain } from '../drain.js';

type HttpLabel = 'route' | 'method' | 'status';

export interface HttpMetrics {
  readonly requests: Counter<HttpLabel>;
  readonly duration: Histogram<HttpLabel>;
  readonly inFlight: Gauge;
  /** route -> method -> status -> the labels of that series: made once, so a request allocates none. */
  readonly labels: Map<string, Map<string, Map<number, Labels<HttpLabel>>>>;
}

/** The host's request metrics, labelled by route pattern (never the raw path), method and status. */
export function httpMetrics(registry: Registry, drain: Drain): HttpMetrics {
  const labelNames = ['route', 'method', 'status'] as const;
  const inFlight: Gauge = registry.gauge({
    name: 'http_requests_in_flight',
    help: 'HTTP requests being served.',
    // Read from the drain's count when scraped, rather than moved up and down by every request.
    collect: () => inFlight.set(undefined, drain.requestsInFlight),
  });
  return {
    requests: registry.counter({ name: 'http_requests_total', help: 'HTTP requests answered.', labelNames }),
    duration: registry.histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from request arrival to the end of the response.',
      labelNames,
    }),
    inFlight,
    labels: new Map(),
  };
}

/**
 * Count and time one request under its route label (`route()`, asked once the answer is done:
 * `unmatched` for 404s) and register it with the drain, all undone by one `close` listener (`close` is
 * emitted once: no `once` wrapper needed). The label objects are made once per series and reused.
 */
export function observe(metrics: HttpMetrics, drain: Drain, req: IncomingMessage, res: ServerResponse, route: () => string): void {
  const start = performance.now();
  const slot = drain.track(res);
  res.on('close', () => {
    drain.release(slot);
    const labels = labelsOf(metrics, route(), req.method ?? 'GET', res.writableFinished ? res.statusCode : ABORTED);
    metrics.requests.inc(labels);
    metrics.duration.observe(labels, (performance.now() - start) / 1000);
  });
}

/** The status label of a request whose answer was not sent completely. */
const ABORTED = -1;

function labelsOf(metrics: HttpMetrics, route: string, method: string, status: number): Labels<HttpLabel> {
  let byMethod = metrics.labels.get(route);
  if (byMethod === undefined) metrics.labels.set(route, (byMethod = new Map<string, Map<number, Labels<HttpLabel>>>()));
  let byStatus = byMethod.get(method);
  if (byStatus === undefined) byMethod.set(method, (byStatus = new Map<number, Labels<HttpLabel>>()));
  let labels = byStatus.get(status);
  if (labels === undefined) byStatus.set(status, (labels = Object.freeze({ route, method, status: status === ABORTED ? 'aborted' : String(status) })));
  return labels;
}
