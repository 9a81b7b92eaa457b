import type { RequestHandler, Response } from 'express';
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

/** First middleware: counts and times every request and registers it with the drain. */
export function observe(metrics: HttpMetrics, drain: Drain): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    metrics.inFlight.inc();
    drain.track(res);
    res.once('close', () => {
      metrics.inFlight.dec();
      const status = res.writableFinished ? String(res.statusCode) : 'aborted';
      const labels = { route: routeLabel(res), method: req.method, status };
      metrics.requests.inc(labels);
      metrics.duration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}

/** Names the route a request matched, for metrics; unmatched requests share one label. */
export function tagRoute(label: string): RequestHandler {
  return (_req, res, next) => {
    res.locals['route'] = label;
    next();
  };
}

function routeLabel(res: Response): string {
  const label: unknown = res.locals['route'];
  return typeof label === 'string' ? label : 'unmatched';
}
