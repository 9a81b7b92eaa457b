import http from 'node:http';
import https from 'node:https';
import { ProtocolError, UnavailableError } from '../errors/index.js';
import { readAll } from '../http/body.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { applyCredentials } from './kubeconfig.js';
import { apiError, statusFromBody, transportError } from './errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RestRequest {
  method: HttpMethod;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON (also for JSON Patch and apply, whose content types accept JSON). */
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal | undefined;
  /** Deadline for the whole exchange (request) or until response headers (stream). */
  timeoutMs?: number;
  /** What is being attempted, for error messages: `get Widget ns/a`. */
  what: string;
}

interface Exchange {
  res: http.IncomingMessage;
  /** Cancel the deadline (the stream now lives until its own signal aborts). */
  clearDeadline: () => void;
  timedOut: () => boolean;
}

/**
 * JSON over HTTPS to the apiserver, authenticated from a KubeConfig, on one keep-alive agent.
 * Non-2xx answers become errors classified by status code (shared/errors classes).
 */
export class RestTransport {
  private agent: http.Agent | undefined;
  private credentials: { readAt: number; options: Promise<https.RequestOptions> } | undefined;

  /**
   * @param credentialsRefreshMs how long the CA, client certificate and bearer token read from the
   *   kubeconfig (files included) are reused before they are read again; rotated service-account
   *   tokens are picked up within this time, and a busy client does not read files per request.
   * @param now the clock that refresh interval is measured with (milliseconds; tests drive a fake).
   */
  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly defaultTimeoutMs = 30_000,
    private readonly credentialsRefreshMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** TLS material and auth headers from the kubeconfig, re-read at most every credentialsRefreshMs. */
  private tlsOptions(): Promise<https.RequestOptions> {
    const now = this.now();
    if (this.credentials === undefined || now - this.credentials.readAt >= this.credentialsRefreshMs) {
      const options: https.RequestOptions = {};
      const read = applyCredentials(this.kubeConfig, options).then(() => options);
      this.credentials = { readAt: now, options: read };
      read.catch(() => (this.credentials = undefined));
    }
    return this.credentials.options;
  }

  /** One request; resolves with the parsed JSON body (undefined when empty). */
  async request(req: RestRequest): Promise<unknown> {
    const ex = await this.exchange(req);
    try {
      const text = await readBody(ex.res);
      const status = ex.res.statusCode ?? 0;
      if (status < 200 || status >= 300) throw apiError(req.what, statusFromBody(status, text, retryAfterOf(ex.res)));
      return text === '' ? undefined : parseJsonBody(text, req.what);
    } catch (err: unknown) {
      throw transportError(req.what, err, ex.timedOut());
    } finally {
      ex.clearDeadline();
    }
  }

  /** A streaming GET (watch): resolves with the open 200 response; other statuses become errors. */
  async stream(req: RestRequest): Promise<http.IncomingMessage> {
    const ex = await this.exchange(req);
    ex.clearDeadline();
    const status = ex.res.statusCode ?? 0;
    if (status === 200) return ex.res;
    const text = await readBody(ex.res).catch(() => '');
    throw apiError(req.what, statusFromBody(status, text, retryAfterOf(ex.res)));
  }

  /** Close pooled connections (lets the process, or jest, exit). */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }

  private async exchange(req: RestRequest): Promise<Exchange> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new UnavailableError(`${req.what}: the kubeconfig has no current cluster`);
    const url = new URL(cluster.server.replace(/\/+$/, '') + req.path);
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const tls = await this.tlsOptions();
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    // client-node writes the object form of headers (never the raw array form).
    const headers: http.OutgoingHttpHeaders = { ...(tls.headers as http.OutgoingHttpHeaders | undefined), Accept: 'application/json' };
    if (body !== undefined) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      // Explicit: Node sends a DELETE body without a length, Go's server ignores it, and the leftover
      // bytes then corrupt the next request on the keep-alive connection (400 Bad Request).
      headers['Content-Length'] = Buffer.byteLength(body);
    }

    const deadline = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      deadline.abort();
    }, req.timeoutMs ?? this.defaultTimeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline.signal]) : deadline.signal;
    const options: https.RequestOptions = { method: req.method, headers, agent: this.agentFor(url, tls), signal };
    if (tls.auth !== undefined) options.auth = tls.auth;
    try {
      const res = await send(url, options, body);
      return { res, clearDeadline: () => clearTimeout(timer), timedOut: () => timedOut };
    } catch (err: unknown) {
      clearTimeout(timer);
      throw transportError(req.what, err, timedOut);
    }
  }

  private agentFor(url: URL, tls: https.RequestOptions): http.Agent {
    if (this.agent) return this.agent;
    if (url.protocol === 'http:') {
      this.agent = new http.Agent({ keepAlive: true });
      return this.agent;
    }
    const options: https.AgentOptions = { keepAlive: true };
    if (tls.ca !== undefined) options.ca = tls.ca;
    if (tls.cert !== undefined) options.cert = tls.cert;
    if (tls.key !== undefined) options.key = tls.key;
    if (tls.rejectUnauthorized !== undefined) options.rejectUnauthorized = tls.rejectUnauthorized;
    if (tls.servername !== undefined) options.servername = tls.servername;
    this.agent = new https.Agent(options);
    return this.agent;
  }
}

function retryAfterOf(res: http.IncomingMessage): string | undefined {
  const value: string | string[] | undefined = res.headers['retry-after'];
  return typeof value === 'string' ? value : value?.[0];
}

/** A 2xx body that is not JSON is the server breaking the protocol (502), not a transport failure. */
function parseJsonBody(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err: unknown) {
    throw new ProtocolError(`${what}: the answer is not JSON`, { cause: err });
  }
}

function send(url: URL, options: https.RequestOptions, body: string | undefined): Promise<http.IncomingMessage> {
  const lib = url.protocol === 'http:' ? http : https;
  return new Promise((resolve, reject) => {
    const request = lib.request(url, options, resolve);
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * The most of an apiserver answer read into memory: far above any list this product makes (10,000 VMs
 * are tens of MB), low enough that a broken or hostile endpoint cannot take the process down.
 */
export const MAX_ANSWER_BYTES = 512 << 20;

/** The whole body as text; rejects past MAX_ANSWER_BYTES or if the connection breaks before the end. */
export async function readBody(res: http.IncomingMessage): Promise<string> {
  const tooLarge = (): Error => new Error(`the apiserver's answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  return (await readAll(res, { limit: MAX_ANSWER_BYTES, tooLarge })).toString('utf8');
}
