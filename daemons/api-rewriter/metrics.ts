import { Registry, type Counter, type Histogram } from '../../shared/metrics/index.js';

const PREFIX = 'd8_virtualization_api_rewriter_';

/** Prometheus metrics of the proxy, one registry per process. */
export class ApiRewriterMetrics {
  readonly registry = new Registry({ processMetrics: true });
  readonly requests: Counter<'proxy' | 'method' | 'decision' | 'watch' | 'code'>;
  readonly duration: Histogram<'proxy' | 'decision' | 'watch'>;
  readonly rewriteErrors: Counter<'side' | 'reason'>;
  readonly upstreamErrors: Counter<'stage'>;
  readonly watchEvents: Counter<'rewritten'>;
  readonly bodiesParsed: Counter<'side'>;

  constructor() {
    const r = this.registry;
    this.requests = r.counter({
      name: `${PREFIX}requests_total`,
      help: 'Requests answered, by proxy (kube-api, webhook), method, decision (rewrite, inspect, pass), watch (true, false) and HTTP status code.',
      labelNames: ['proxy', 'method', 'decision', 'watch', 'code'],
    });
    this.duration = r.histogram({
      name: `${PREFIX}request_duration_seconds`,
      help: 'From the request to the end of the answer (watches: to the response headers).',
      labelNames: ['proxy', 'decision', 'watch'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    });
    this.rewriteErrors = r.counter({
      name: `${PREFIX}rewrite_errors_total`,
      help: 'Bodies that could not be rewritten, by side (request: refused with 4xx; response: passed as-is) and reason.',
      labelNames: ['side', 'reason'],
    });
    this.upstreamErrors = r.counter({
      name: `${PREFIX}upstream_errors_total`,
      help: 'Apiserver connections that failed, by stage (connect: answered 503; stream: a response or watch broke midway).',
      labelNames: ['stage'],
    });
    this.watchEvents = r.counter({
      name: `${PREFIX}watch_events_total`,
      help: 'Watch events passed to clients, by whether they were rewritten.',
      labelNames: ['rewritten'],
    });
    this.bodiesParsed = r.counter({
      name: `${PREFIX}bodies_parsed_total`,
      help: 'Bodies read to be rewritten (parsed; one object of a renamed kind scanned as text), by side; the others passed as bytes.',
      labelNames: ['side'],
    });
  }
}
