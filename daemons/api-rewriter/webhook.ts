/**
 * The webhook side (the original's second proxy): the apiserver calls KubeVirt's admission webhooks
 * through this TLS server. For the paths of the rules' webhook map the AdmissionReview request is
 * restored to original names before KubeVirt's webhook server sees it, and the JSON Patch of its
 * answer is renamed back; other paths and validating answers pass as they are.
 */
import type http from 'node:http';
import https from 'node:https';
import { AdmissionReviewError, renameAdmissionResponse, restoreAdmissionRequest, type Renamer } from './rules/index.js';
import { errorMessage, PayloadTooLargeError } from '../../shared/errors/index.js';
import { readAll } from '../../shared/http/body.js';
import type { Logger } from '../../shared/log/index.js';
import type { ApiRewriterMetrics } from './metrics.js';
import { sendStatus } from './proxy.js';

export interface WebhookProxyOptions {
  readonly renamer: Renamer;
  /** KubeVirt's webhook server, e.g. https://127.0.0.1:9443 (its certificate is not verified, as in the original: it is a local peer). */
  readonly target: URL;
  readonly metrics: ApiRewriterMetrics;
  readonly log: Logger;
  readonly maxBodyBytes: number;
}

export function createWebhookHandler(opts: WebhookProxyOptions): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
  return (req, res) => {
    void handleWebhook(opts, agent, req, res).catch((err: unknown) => {
      opts.log.error({ err, url: req.url }, 'webhook request failed');
      if (!res.headersSent) sendStatus(res, 500, 'InternalError', `the webhook proxy failed: ${errorMessage(err)}`);
      else res.destroy();
    });
  };
}

async function handleWebhook(opts: WebhookProxyOptions, agent: https.Agent, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const started = performance.now();
  const { renamer, metrics } = opts;
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const known = renamer.rules.webhooks[path] !== undefined;
  const labels = { proxy: 'webhook', decision: known ? 'rewrite' : 'pass', watch: 'false' } as const;
  const done = (code: number): void => {
    metrics.requests.inc({ method: req.method ?? 'POST', ...labels, code: String(code) });
    metrics.duration.observe(labels, (performance.now() - started) / 1000);
  };
  const refuse = (code: number, reason: string, message: string): void => {
    metrics.rewriteErrors.inc({ side: 'request', reason });
    sendStatus(res, code, code === 413 ? 'RequestEntityTooLarge' : 'BadRequest', message);
    done(code);
  };
  let body: Buffer;
  try {
    body = await readAll(req, {
      limit: opts.maxBodyBytes,
      tooLarge: () => new PayloadTooLargeError(`the AdmissionReview is larger than ${opts.maxBodyBytes} bytes`),
    });
  } catch (err: unknown) {
    if (err instanceof PayloadTooLargeError) refuse(413, 'too_large', err.message);
    else refuse(400, 'unreadable', `the AdmissionReview could not be read: ${errorMessage(err)}`);
    return;
  }
  let originalKind: string | undefined;
  if (known) {
    try {
      const review: unknown = JSON.parse(body.toString('utf8'));
      originalKind = restoreAdmissionRequest(renamer, review);
      body = Buffer.from(JSON.stringify(review));
    } catch (err: unknown) {
      const reason = err instanceof AdmissionReviewError ? 'invalid_review' : 'invalid_json';
      refuse(400, reason, `the webhook request is not an AdmissionReview this proxy can rewrite: ${errorMessage(err)}`);
      return;
    }
  }
  const headers: http.OutgoingHttpHeaders = { ...req.headers, host: opts.target.host, 'content-length': body.length };
  delete headers['transfer-encoding'];
  delete headers['connection'];
  const upstreamReq = https.request({
    protocol: 'https:',
    hostname: opts.target.hostname,
    port: opts.target.port,
    path: req.url,
    method: req.method,
    headers,
    agent,
  });
  upstreamReq.on('error', (err) => {
    if (res.headersSent) return;
    metrics.upstreamErrors.inc({ stage: 'connect' });
    sendStatus(res, 503, 'ServiceUnavailable', `the webhook server behind the proxy is unreachable: ${errorMessage(err)}`);
    done(503);
  });
  upstreamReq.on('response', (upstreamRes) => {
    void (async () => {
      let answer = await readAll(upstreamRes, {
        limit: opts.maxBodyBytes,
        tooLarge: () => new Error(`the webhook answer is larger than ${opts.maxBodyBytes} bytes`),
      });
      const status = upstreamRes.statusCode ?? 502;
      if (known && status === 200 && originalKind !== undefined) {
        try {
          const review: unknown = JSON.parse(answer.toString('utf8'));
          renameAdmissionResponse(renamer, review, originalKind);
          answer = Buffer.from(JSON.stringify(review));
        } catch (err: unknown) {
          // The apiserver refuses (or ignores, per failurePolicy) what it cannot read: passed as it is.
          metrics.rewriteErrors.inc({ side: 'response', reason: err instanceof AdmissionReviewError ? 'invalid_review' : 'invalid_json' });
        }
      }
      res.writeHead(status, { 'content-type': upstreamRes.headers['content-type'] ?? 'application/json', 'content-length': answer.length });
      res.end(answer);
      done(status);
    })().catch((err: unknown) => {
      metrics.upstreamErrors.inc({ stage: 'stream' });
      if (!res.headersSent) sendStatus(res, 502, 'InternalError', `the webhook answer could not be read: ${errorMessage(err)}`);
      done(502);
    });
  });
  upstreamReq.end(body);
}
