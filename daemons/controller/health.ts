import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EXPOSITION_CONTENT_TYPE } from '../../shared/metrics/index.js';

export const LIVENESS_PATH = '/health/liveness';
export const READINESS_PATH = '/health/readiness';
export const METRICS_PATH = '/metrics';

export interface HealthSources {
  /** Ready to serve as a replica (a standby is ready too: it is waiting to lead). */
  ready: () => boolean;
  /** The Prometheus text of every metric. */
  metrics: () => string;
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

/** /health/liveness, /health/readiness and /metrics on one small HTTP server. */
export async function startHealthServer(host: string, port: number, sources: HealthSources): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    if (path === LIVENESS_PATH) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"alive"}');
    } else if (path === READINESS_PATH) {
      const ready = sources.ready();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' }).end(ready ? '{"status":"ready"}' : '{"status":"not ready"}');
    } else if (path === METRICS_PATH) {
      res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE }).end(sources.metrics());
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
