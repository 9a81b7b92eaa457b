/**
 * The HTTP handler of the proxy. Framing only: the decisions (what a path is, how names change) come
 * from rules/. Bodies of `pass` requests stream through as bytes; `rewrite` and `inspect`
 * bodies are read whole (up to a limit), rewritten when they hold a name to rewrite, and sent with a
 * fresh Content-Length; watch responses go through the event-by-event WatchTransform.
 */
import type http from 'node:http';
import { gunzipSync, inflateSync } from 'node:zlib';
import {
  ListRestoreStream,
  PatchError,
  WatchTransform,
  needsParsing,
  patchKindOf,
  planRequest,
  restoreDocument,
  restoreListBody,
  rewriteObject,
  rewritePatch,
  type Renamer,
  type RequestPlan,
} from './rules/index.js';
import { errorMessage } from '../../shared/errors/index.js';
import { readAll, readBody } from '../../shared/http/body.js';
import type { Logger } from '../../shared/log/index.js';
import type { ApiRewriterMetrics } from './metrics.js';
import type { UpstreamTarget } from './upstream.js';

export interface ProxyOptions {
  readonly renamer: Renamer;
  readonly upstream: UpstreamTarget;
  readonly metrics: ApiRewriterMetrics;
  readonly log: Logger;
  readonly maxRequestBodyBytes: number;
  readonly maxResponseBodyBytes: number;
}

/** Request headers never forwarded: hop-by-hop ones, and the client's own credentials and host. */
const DROP_REQUEST = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
]);
const DROP_RESPONSE = new Set(['connection', 'keep-alive', 'transfer-encoding', 'trailer', 'upgrade']);

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

class BodyError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** How many request URLs keep their plan (planRequest is pure; clients ask for the same paths again and again). */
const PLAN_CACHE_SIZE = 1_000;

export function createProxyHandler(opts: ProxyOptions): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const plans = new Map<string, RequestPlan>();
  const planOf = (url: string): RequestPlan => {
    let plan = plans.get(url);
    if (plan === undefined) {
      plan = planRequest(opts.renamer, url);
      if (plans.size >= PLAN_CACHE_SIZE) plans.clear();
      plans.set(url, plan);
    }
    return plan;
  };
  return (req, res) => {
    void handle(opts, planOf(req.url ?? '/'), req, res).catch((err: unknown) => {
      opts.log.error({ err, url: req.url }, 'proxy request failed');
      if (!res.headersSent) sendStatus(res, 500, 'InternalError', `the proxy failed: ${errorMessage(err)}`);
      else res.destroy();
    });
  };
}

async function handle(opts: ProxyOptions, plan: RequestPlan, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const started = performance.now();
  const { metrics } = opts;
  const method = req.method ?? 'GET';
  const watch = plan.endpoint.watch;
  const labels = { proxy: 'kube-api', decision: plan.body, watch: watch ? 'true' : 'false' } as const;
  const done = (code: number): void => {
    metrics.requests.inc({ method, ...labels, code: String(code) });
    metrics.duration.observe(labels, (performance.now() - started) / 1000);
  };

  const headers = copyHeaders(req.headers, DROP_REQUEST);
  Object.assign(headers, opts.upstream.authHeaders());

  let body: Buffer | undefined;
  const hasBody = method !== 'GET' && method !== 'HEAD' && (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined);
  if (plan.body !== 'pass') {
    headers.accept = jsonAccept(req.headers.accept);
    delete headers['accept-encoding'];
    if (hasBody) {
      try {
        body = await requestBody(opts, plan, req);
      } catch (err: unknown) {
        if (!(err instanceof BodyError)) throw err;
        metrics.rewriteErrors.inc({ side: 'request', reason: err.reason });
        sendStatus(res, err.status, err.status === 413 ? 'RequestEntityTooLarge' : err.status === 415 ? 'UnsupportedMediaType' : 'BadRequest', err.message);
        req.resume();
        done(err.status);
        return;
      }
      headers['content-length'] = body.length;
      delete headers['transfer-encoding'];
    }
  }

  const upstreamReq = opts.upstream.request({ method, path: plan.upstreamUrl, headers });
  res.on('close', () => {
    if (!res.writableFinished) upstreamReq.destroy();
  });
  upstreamReq.on('error', (err) => {
    if (res.headersSent) return;
    metrics.upstreamErrors.inc({ stage: 'connect' });
    opts.log.warn({ err, url: req.url }, 'apiserver unreachable');
    sendStatus(res, 503, 'ServiceUnavailable', `the apiserver behind the proxy is unreachable: ${errorMessage(err)}`);
    done(503);
  });
  upstreamReq.on('response', (upstreamRes) => {
    void respond(opts, plan, method, upstreamRes, res, done).catch((err: unknown) => {
      opts.log.error({ err, url: req.url }, 'response failed');
      if (!res.headersSent) sendStatus(res, 502, 'InternalError', `the proxy could not answer: ${errorMessage(err)}`);
      else res.destroy();
    });
  });
  if (body !== undefined) upstreamReq.end(body);
  else if (hasBody) req.pipe(upstreamReq);
  else upstreamReq.end();
}

/** The code counted for a request whose client left before its answer was finished (nginx's convention). */
const CLIENT_CLOSED = 499;

/**
 * The client went away before its answer was finished. The proxy then drops the apiserver request
 * itself (see handle), so the cut upstream answer that follows is no apiserver failure.
 */
function clientGone(res: http.ServerResponse): boolean {
  return res.destroyed && !res.writableFinished;
}

/** The headers without the dropped ones (a plain loop: this runs twice per request). */
function copyHeaders(from: http.IncomingHttpHeaders, drop: ReadonlySet<string>): http.OutgoingHttpHeaders {
  const headers: http.OutgoingHttpHeaders = {};
  for (const k in from) {
    const v = from[k];
    if (v !== undefined && !drop.has(k)) headers[k] = v;
  }
  return headers;
}

/** Accept without protobuf (a body to rewrite must be JSON); JSON tables are kept. */
function jsonAccept(accept: string | undefined): string {
  if (accept === undefined || accept === '' || accept === '*/*') return 'application/json';
  if (!accept.includes('protobuf')) return accept;
  const kept = accept
    .split(',')
    .map((a) => a.trim())
    .filter((a) => !a.startsWith(PROTOBUF) && !a.includes('protobuf'));
  return kept.length > 0 ? kept.join(',') : 'application/json';
}

async function requestBody(opts: ProxyOptions, plan: RequestPlan, req: http.IncomingMessage): Promise<Buffer> {
  const contentType = req.headers['content-type'] ?? 'application/json';
  const raw = await readAll(req, {
    limit: opts.maxRequestBodyBytes,
    tooLarge: () => new BodyError(413, 'too_large', `the request body is larger than ${opts.maxRequestBodyBytes} bytes, the most this proxy rewrites`),
  });
  if (contentType.startsWith(PROTOBUF) || contentType.includes('cbor')) {
    throw new BodyError(
      415,
      'unsupported_media_type',
      `the proxy rewrites JSON bodies only; send ${plan.endpoint.resource ?? 'this resource'} as application/json, not ${contentType}`,
    );
  }
  if (raw.length === 0 || !needsParsing(opts.renamer, plan.body, raw)) return raw;
  opts.metrics.bodiesParsed.inc({ side: 'request' });
  let doc: unknown;
  try {
    doc = JSON.parse(raw.toString('utf8'));
  } catch (err: unknown) {
    const hint = contentType.startsWith('application/apply-patch+yaml') ? ' (server-side apply through this proxy needs the YAML written as JSON)' : '';
    throw new BodyError(400, 'invalid_json', `the request body is not valid JSON${hint}: ${errorMessage(err)}`);
  }
  const patchKind = req.method === 'PATCH' ? patchKindOf(contentType) : undefined;
  try {
    const out =
      patchKind !== undefined ? rewritePatch(opts.renamer, patchKind, doc, 'rename', plan.hintKind) : rewriteObject(opts.renamer, doc, 'rename', plan.hintKind);
    return Buffer.from(JSON.stringify(out));
  } catch (err: unknown) {
    if (err instanceof PatchError) throw new BodyError(400, 'invalid_patch', err.message);
    throw err;
  }
}

async function respond(
  opts: ProxyOptions,
  plan: RequestPlan,
  method: string,
  upstreamRes: http.IncomingMessage,
  res: http.ServerResponse,
  done: (code: number) => void,
): Promise<void> {
  const status = upstreamRes.statusCode ?? 502;
  const headers = copyHeaders(upstreamRes.headers, DROP_RESPONSE);
  const contentType = upstreamRes.headers['content-type'] ?? '';
  // The apiserver answers the OpenAPI v3 index as text/plain; it is JSON all the same.
  const openapi = plan.endpoint.kind.startsWith('openapi');
  const json = contentType.startsWith('application/json') || (openapi && contentType.startsWith('text/plain'));
  if (plan.body === 'pass' || !json) {
    res.writeHead(status, headers);
    upstreamRes.pipe(res);
    upstreamRes.on('error', () => res.destroy());
    upstreamRes.on('end', () => done(status));
    return;
  }
  if (plan.endpoint.watch && status === 200) {
    streamWatch(opts, plan, upstreamRes, res, headers);
    done(status);
    return;
  }
  const encoding = upstreamRes.headers['content-encoding'];
  const plain = encoding === undefined || encoding === 'identity';
  let received: Buffer | undefined;
  if (isCollectionGet(plan, method) && status === 200 && plain) {
    received = await streamList(opts, plan, upstreamRes, res, headers, done);
    if (received === undefined) return;
  }
  // Answered from the callback that completes the body, not after a promise: see readBody.
  await new Promise<void>((resolve, reject) => {
    readBody(
      upstreamRes,
      {
        limit: opts.maxResponseBodyBytes,
        tooLarge: () =>
          new BodyError(502, 'too_large', `the apiserver's answer is larger than ${opts.maxResponseBodyBytes} bytes, the most this proxy rewrites`),
      },
      received,
      (err, raw) => {
        try {
          answerWhole(opts, plan, status, headers, encoding, err, raw, res, done);
          resolve();
        } catch (e: unknown) {
          reject(e instanceof Error ? e : new Error(String(e)));
        }
      },
    );
  });
}

/** The answer to the client once the apiserver's whole answer is in (`raw`), or once reading it failed (`err`). */
function answerWhole(
  opts: ProxyOptions,
  plan: RequestPlan,
  status: number,
  headers: http.OutgoingHttpHeaders,
  encoding: string | undefined,
  err: Error | undefined,
  body: Buffer | undefined,
  res: http.ServerResponse,
  done: (code: number) => void,
): void {
  if (err !== undefined || body === undefined) {
    if (clientGone(res)) {
      done(CLIENT_CLOSED);
      return;
    }
    opts.metrics.upstreamErrors.inc({ stage: 'stream' });
    if (err instanceof BodyError) {
      sendStatus(res, 502, 'InternalError', err.message);
      done(502);
      return;
    }
    res.destroy();
    done(status);
    return;
  }
  let raw = body;
  if (encoding === 'gzip' || encoding === 'deflate') {
    raw = encoding === 'gzip' ? gunzipSync(raw) : inflateSync(raw);
    delete headers['content-encoding'];
  }
  const out = restoreBody(opts, plan, raw);
  if (typeof out === 'string') {
    // One string: node writes the header and the body together in one write, no Buffer copy.
    headers['content-length'] = Buffer.byteLength(out);
    res.writeHead(status, headers);
    res.end(out);
    done(status);
    return;
  }
  headers['content-length'] = out.reduce((n, b) => n + b.length, 0);
  res.writeHead(status, headers);
  if (out.length === 1) res.end(out[0]);
  else {
    res.cork();
    for (const piece of out) res.write(piece);
    res.end();
  }
  done(status);
}

/**
 * The answer in the client's naming: Buffers to send in order, or one string (a document parsed,
 * restored and serialized). A list is restored item by item (rules/list.ts), never parsed whole.
 */
function restoreBody(opts: ProxyOptions, plan: RequestPlan, raw: Buffer): Buffer[] | string {
  if (raw.length === 0 || !needsParsing(opts.renamer, plan.body, raw)) return [raw];
  opts.metrics.bodiesParsed.inc({ side: 'response' });
  try {
    // A named object (GET of one VM) is never a list: no scan for `items`, it is parsed.
    const pieces = plan.endpoint.name === undefined ? restoreListBody(opts.renamer, plan, raw) : undefined;
    if (pieces !== undefined) return pieces;
    return JSON.stringify(restoreDocument(opts.renamer, plan, JSON.parse(raw.toString('utf8'))));
  } catch (err: unknown) {
    if (!(err instanceof SyntaxError)) throw err;
    opts.metrics.rewriteErrors.inc({ side: 'response', reason: 'invalid_json' });
    return [raw];
  }
}

function streamWatch(
  opts: ProxyOptions,
  plan: RequestPlan,
  upstreamRes: http.IncomingMessage,
  res: http.ServerResponse,
  headers: http.OutgoingHttpHeaders,
): void {
  const { metrics, log } = opts;
  delete headers['content-length'];
  delete headers['content-encoding'];
  const transform = new WatchTransform(opts.renamer, {
    mode: plan.body,
    direction: 'restore',
    hintKind: plan.hintKind,
    onEvent: (rewritten) => metrics.watchEvents.inc({ rewritten: rewritten ? 'true' : 'false' }),
    onInvalidLine: () => metrics.rewriteErrors.inc({ side: 'response', reason: 'invalid_json' }),
    onTruncated: (bytes) => {
      metrics.rewriteErrors.inc({ side: 'response', reason: 'truncated_watch_event' });
      log.warn({ bytes, url: plan.upstreamUrl }, 'the apiserver watch broke inside an event; the partial event is dropped and the stream ends');
    },
  });
  res.writeHead(200, headers);
  res.flushHeaders();
  transform.pipe(res);
  upstreamRes.pipe(transform, { end: false });
  const finish = (): void => {
    if (!transform.writableEnded) transform.end();
  };
  upstreamRes.on('end', finish);
  upstreamRes.on('close', () => {
    if (!upstreamRes.complete && !clientGone(res)) metrics.upstreamErrors.inc({ stage: 'stream' });
    finish();
  });
  upstreamRes.on('error', finish);
}

/** A GET of a renamed collection (not a watch): its list answer is restored while it streams. */
function isCollectionGet(plan: RequestPlan, method: string): boolean {
  const e = plan.endpoint;
  return method === 'GET' && plan.body === 'rewrite' && e.kind === 'resource' && e.name === undefined && !e.watch;
}

/**
 * A list answer restored item by item while it arrives (rules/list.ts ListRestoreStream) and sent
 * chunked, with backpressure: the proxy keeps one element's bytes, not the list. Resolves undefined
 * once it answered; or, when the answer turned out not to be a list before anything was sent, the
 * bytes read so far (the caller reads the rest and restores the whole). Once streaming, a broken or
 * cut upstream answer cuts the client's answer too (never a finished, corrupt document).
 */
function streamList(
  opts: ProxyOptions,
  plan: RequestPlan,
  upstreamRes: http.IncomingMessage,
  res: http.ServerResponse,
  headers: http.OutgoingHttpHeaders,
  done: (code: number) => void,
): Promise<Buffer | undefined> {
  const { metrics } = opts;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (received?: Buffer): void => {
      if (settled) return;
      settled = true;
      upstreamRes.off('data', onData);
      upstreamRes.off('end', onEnd);
      upstreamRes.off('close', onClose);
      res.off('drain', onDrain);
      resolve(received);
    };
    const fail = (reason: 'invalid_json' | 'stream', err: unknown): void => {
      if (settled) return;
      if (reason === 'stream') metrics.upstreamErrors.inc({ stage: 'stream' });
      else metrics.rewriteErrors.inc({ side: 'response', reason: err instanceof SyntaxError ? 'invalid_json' : 'internal' });
      opts.log.warn({ err, url: plan.upstreamUrl }, 'the list answer broke while it streamed; the answer to the client is cut');
      upstreamRes.destroy();
      if (res.headersSent) {
        res.destroy();
        done(200);
      } else {
        sendStatus(res, 502, 'InternalError', `the apiserver's list answer broke before the proxy sent anything: ${errorMessage(err)}`);
        done(502);
      }
      finish();
    };
    const stream = new ListRestoreStream(opts.renamer, plan, (piece) => {
      if (!res.headersSent) {
        delete headers['content-length'];
        opts.metrics.bodiesParsed.inc({ side: 'response' });
        res.writeHead(200, headers);
      }
      if (!res.write(piece)) upstreamRes.pause();
    });
    const onDrain = (): void => {
      upstreamRes.resume();
    };
    const onData = (chunk: Buffer): void => {
      try {
        if (stream.push(chunk) === 'not-list') {
          upstreamRes.pause();
          finish(stream.received());
        } else if (stream.pendingBytes > opts.maxResponseBodyBytes) {
          fail('stream', new Error(`one list item is larger than ${opts.maxResponseBodyBytes} bytes`));
        }
      } catch (err: unknown) {
        fail('invalid_json', err);
      }
    };
    const onEnd = (): void => {
      if (!res.headersSent) {
        // Ended before the items array opened: not a list (or cut early); restored whole, as before.
        finish(stream.received());
        return;
      }
      try {
        stream.end();
      } catch (err: unknown) {
        fail('invalid_json', err);
        return;
      }
      res.end();
      done(200);
      finish();
    };
    const onClose = (): void => {
      if (!upstreamRes.complete && clientGone(res)) {
        // The client left, so the proxy dropped the apiserver's answer itself: no apiserver failure.
        done(CLIENT_CLOSED);
        finish();
      } else if (!upstreamRes.complete) {
        if (res.headersSent) fail('stream', new Error('the apiserver closed the connection inside the list'));
        else {
          metrics.upstreamErrors.inc({ stage: 'stream' });
          res.destroy();
          done(200);
          finish();
        }
      }
    };
    res.on('drain', onDrain);
    upstreamRes.on('data', onData);
    upstreamRes.on('end', onEnd);
    upstreamRes.on('close', onClose);
  });
}

/** A Kubernetes Status answer, so kubectl and client-go show the message. */
export function sendStatus(res: http.ServerResponse, code: number, reason: string, message: string): void {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
