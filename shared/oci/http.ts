/**
 * One streaming HTTP(S) request on node:http(s), for the OCI client and the importer's HTTP source:
 * the body in and out as streams (no buffering of disk images), redirects followed, extra CAs or no
 * verification, a no-progress timeout, an AbortSignal. The response is returned unread.
 */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { TimeoutError, UnavailableError } from '../errors/index.js';
import { readAll } from '../http/body.js';

export interface TlsOptions {
  /** Extra CA certificates (PEM), trusted besides the system's. */
  readonly ca?: readonly string[] | undefined;
  /** Do not verify the server's certificate. */
  readonly insecure?: boolean | undefined;
}

export interface RequestOptions {
  readonly method?: string;
  readonly headers?: OutgoingHttpHeaders;
  /** A body to stream, or a Buffer. */
  readonly body?: Readable | Buffer | undefined;
  readonly tls?: TlsOptions | undefined;
  /** Fail when the connection or the response makes no progress for this long (ms). */
  readonly timeoutMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Follow up to this many redirects (GET and HEAD only); default 5. */
  readonly maxRedirects?: number;
}

export interface Response {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  /** The final URL after redirects. */
  readonly url: string;
  readonly body: IncomingMessage;
}

/** Send one request; redirects are followed for bodiless requests. Network failures are UnavailableError. */
export async function send(url: string, opts: RequestOptions = {}): Promise<Response> {
  let current = url;
  for (let hop = 0; ; hop++) {
    const res = await sendOnce(current, opts);
    const location = res.headers.location;
    const method = opts.method ?? 'GET';
    if ([301, 302, 303, 307, 308].includes(res.status) && location !== undefined && (method === 'GET' || method === 'HEAD')) {
      res.body.resume();
      if (hop >= (opts.maxRedirects ?? 5)) throw new UnavailableError(`too many redirects from ${url}`, { upstreamStatus: res.status });
      current = new URL(location, current).toString();
      continue;
    }
    return res;
  }
}

function sendOnce(url: string, opts: RequestOptions): Promise<Response> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const isHttps = target.protocol === 'https:';
    const make = isHttps ? httpsRequest : httpRequest;
    const req = make(target, {
      method: opts.method ?? 'GET',
      headers: opts.headers,
      signal: opts.signal,
      // A fresh connection per request: an importer makes a handful, and a kept-alive socket the
      // server has just closed would fail the next request with "socket hang up".
      agent: false,
      ...(isHttps
        ? { ca: opts.tls?.ca !== undefined && opts.tls.ca.length > 0 ? [...opts.tls.ca] : undefined, rejectUnauthorized: opts.tls?.insecure !== true }
        : {}),
    });
    if (opts.timeoutMs !== undefined) {
      req.setTimeout(opts.timeoutMs, () => req.destroy(new TimeoutError(`${target.host} sent nothing for ${opts.timeoutMs} ms`)));
    }
    req.once('error', (err) =>
      reject(err instanceof TimeoutError || isAbort(err) ? err : new UnavailableError(`cannot reach ${target.host}: ${err.message}`, { cause: err })),
    );
    req.once('response', (res) => {
      // The no-progress timeout also covers the body: the socket's idle timer keeps running.
      resolve({ status: res.statusCode ?? 0, headers: res.headers, url, body: res });
    });
    if (opts.body === undefined) req.end();
    else if (Buffer.isBuffer(opts.body)) req.end(opts.body);
    else pipeline(opts.body, req).catch((err: unknown) => req.destroy(err instanceof Error ? err : new Error(String(err))));
  });
}

function isAbort(err: Error): boolean {
  return err.name === 'AbortError';
}

/** Read a whole (small) body, refusing more than `limit` bytes; the connection is dropped past it. */
export async function readBody(res: Response, limit = 4 << 20): Promise<Buffer> {
  const tooLarge = (): Error =>
    new UnavailableError(`${res.url} answered more than ${limit} bytes where a small document was expected`, { upstreamStatus: res.status });
  try {
    return await readAll(res.body, { limit, tooLarge });
  } catch (err: unknown) {
    res.body.destroy();
    throw err;
  }
}
