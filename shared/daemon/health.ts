import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { denialReply, type RequestGuard } from '../authz/index.js';
import { EXPOSITION_CONTENT_TYPE } from '../metrics/index.js';
import { listen } from '../http/listen.js';

export const LIVENESS_PATH = '/health/liveness';
export const READINESS_PATH = '/health/readiness';
export const METRICS_PATH = '/metrics';

export interface HealthSources {
  /** Ready to serve as a replica (a standby is ready too: it is waiting to lead). */
  ready: () => boolean;
  /** The Prometheus text of every metric. */
  metrics: () => string | Promise<string>;
  /** Who may read /metrics (METRICS_AUTH=kubernetes); undefined: anyone. The health paths stay open. */
  metricsGuard?: RequestGuard | undefined;
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * /health/liveness, /health/readiness and /metrics (behind the guard, if any) on one small HTTP server.
 * An address it cannot bind rejects with a ListenError naming `name`, the address and the cause.
 */
export async function startHealthServer(host: string, port: number, sources: HealthSources, name = 'the health server'): Promise<HealthServer> {
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
      void serveMetrics(req, res, sources);
    } else {
      res.writeHead(404).end();
    }
  });
  return {
    port: await listen(server, host, port, name),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function serveMetrics(req: IncomingMessage, res: ServerResponse, sources: HealthSources): Promise<void> {
  const decision = await sources.metricsGuard?.check(req.headers.authorization);
  if (decision?.allowed === false) {
    const reply = denialReply(decision);
    res.writeHead(reply.status, reply.headers).end(reply.body);
    return;
  }
  const text = await sources.metrics();
  res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE }).end(text);
}
