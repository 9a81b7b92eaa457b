/**
 * The proxy process: the HTTP proxy in front of the apiserver and the health/metrics server. Ready once
 * the proxy listens and the apiserver answered /readyz once.
 */
import http from 'node:http';
import https from 'node:https';
import { metricsGuard } from '../../shared/authz/index.js';
import { startHealthServer, type HealthServer } from '../../shared/daemon/health.js';
import { errorMessage } from '../../shared/errors/index.js';
import { listen } from '../../shared/http/listen.js';
import { untilAborted, type KubeClient } from '../../shared/kube/index.js';
import { childLogger, type Logger } from '../../shared/log/index.js';
import { KUBEVIRT_RULES, Renamer } from './rules/index.js';
import type { ApiRewriterConfig } from './config.js';
import { ApiRewriterMetrics } from './metrics.js';
import { createProxyHandler } from './proxy.js';
import { createUpgradeHandler } from './upgrade.js';
import { upstreamFromKubeConfig } from './upstream.js';
import { createWebhookHandler } from './webhook.js';
import { TlsReloader } from '../../shared/runtime/tls.js';

/** The log line (message) that carries `proxyPort` and `healthPort`: the platform reads the ports from it. */
export const STARTED_MESSAGE = 'kube-api-rewriter started: proxy and health served';

export interface ApiRewriterOptions {
  config: ApiRewriterConfig;
  kube: KubeClient;
  signal: AbortSignal;
  logger?: Logger;
}

export interface ApiRewriterHandle {
  readonly metrics: ApiRewriterMetrics;
  /**
   * The proxy port, the webhook proxy port (when WEBHOOK_ADDRESS is set) and the health server, once all
   * listen; an address one of them cannot bind rejects it with a ListenError naming that server.
   */
  readonly listening: Promise<{ proxyPort: number; webhookPort: number | undefined; health: HealthServer }>;
  /** Resolves when the daemon has stopped. */
  readonly done: Promise<void>;
}

export function runApiRewriter(options: ApiRewriterOptions): ApiRewriterHandle {
  const { config, kube, signal } = options;
  const log = options.logger ?? childLogger({ component: 'kube-api-rewriter' });
  const metrics = new ApiRewriterMetrics();
  const renamer = new Renamer(KUBEVIRT_RULES);
  let ready = false;
  const listening = (async () => {
    const upstream = await upstreamFromKubeConfig(kube.kubeConfig);
    signal.addEventListener('abort', () => upstream.close(), { once: true });
    const server = http.createServer(
      { keepAliveTimeout: 65_000, requestTimeout: 0, noDelay: true },
      createProxyHandler({
        renamer,
        upstream,
        metrics,
        log,
        maxRequestBodyBytes: config.MAX_REQUEST_BODY_BYTES,
        maxResponseBodyBytes: config.MAX_RESPONSE_BODY_BYTES,
      }),
    );
    server.on('upgrade', createUpgradeHandler(renamer, upstream, log));
    server.on('clientError', (err, socket) => {
      log.debug({ err }, 'malformed HTTP from a client');
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    });
    const proxyPort = await listenUntil(server, config.PROXY_HOST, config.PROXY_PORT, 'the proxy', signal);
    const webhook = config.WEBHOOK_ADDRESS === undefined ? undefined : await startWebhookProxy(config, config.WEBHOOK_ADDRESS, renamer, metrics, log, signal);
    const health = await startHealthServer(config.HEALTH_HOST, config.HEALTH_PORT, {
      ready: () => ready && (webhook === undefined || webhook.tls.status().ok),
      metrics: () => metrics.registry.expose(),
      metricsGuard: metricsGuard(config, kube, log),
    });
    signal.addEventListener('abort', () => void health.close(), { once: true });
    const webhookPort = webhook?.port;
    log.info({ proxyHost: config.PROXY_HOST, proxyPort, webhookPort, healthPort: health.port, upstream: upstream.url.origin }, STARTED_MESSAGE);
    void checkUpstream(kube, log, signal).then(() => (ready = true));
    return { proxyPort, webhookPort, health };
  })();
  const done = listening.then(() => untilAborted(signal));
  return { metrics, listening, done };
}

/** The webhook proxy: HTTPS with the certificate files (hot reloaded), in front of KubeVirt's webhook server. */
async function startWebhookProxy(
  config: ApiRewriterConfig,
  address: string,
  renamer: Renamer,
  metrics: ApiRewriterMetrics,
  log: Logger,
  signal: AbortSignal,
): Promise<{ port: number; tls: TlsReloader }> {
  const server = https.createServer(
    {},
    createWebhookHandler({ renamer, target: new URL(address), metrics, log: log.child({ proxy: 'webhook' }), maxBodyBytes: config.MAX_REQUEST_BODY_BYTES }),
  );
  const tls = new TlsReloader({ certFile: config.WEBHOOK_CERT_FILE, keyFile: config.WEBHOOK_KEY_FILE, reloadMs: 10_000 }, server, log);
  await tls.start();
  signal.addEventListener('abort', () => tls.stop(), { once: true });
  return { port: await listenUntil(server, config.WEBHOOK_PROXY_HOST, config.WEBHOOK_PROXY_PORT, 'the webhook proxy', signal), tls };
}

/** Listen (port 0: a free one) and close with every connection when the signal aborts; the bound port. */
async function listenUntil(server: http.Server | https.Server, host: string, port: number, what: string, signal: AbortSignal): Promise<number> {
  const bound = await listen(server, host, port, what);
  signal.addEventListener(
    'abort',
    () => {
      server.close();
      server.closeAllConnections();
    },
    { once: true },
  );
  return bound;
}

/** Wait until the apiserver answers (GET /version; the proxy is not ready before). */
async function checkUpstream(kube: KubeClient, log: Logger, signal: AbortSignal): Promise<void> {
  let delay = 200;
  while (!signal.aborted) {
    try {
      await kube.rest.request({ method: 'GET', path: '/version', what: 'apiserver version', timeoutMs: 5_000, signal });
      return;
    } catch (err: unknown) {
      log.warn({ err: errorMessage(err) }, 'apiserver not ready yet');
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 5_000);
    }
  }
}
