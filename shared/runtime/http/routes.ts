import { randomUUID, type X509Certificate } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { requestContext } from '../context.js';
import type { FunctionContext, Route, RouteRequest, RouteResponse } from '../types.js';
import { isThenable, type Endpoint, type Params } from './exchange.js';
import { parseJson, NO_CONTENT_TYPE } from './json.js';
import { sendReply, JSON_CONTENT_TYPE, type Reply } from './reply.js';

/**
 * The endpoint of one plain route: framing only, the route's `handle` decides. With a handler that
 * answers at once, the answer is written synchronously (no promise).
 */
export function routeEndpoint<Cfg, S>(route: Route<Cfg, S>, base: FunctionContext<Cfg, S>): Endpoint {
  return ({ req, res, params, body }) => {
    const result = route.handle(new HostRouteRequest(req, body, params), requestContext(base, requestIdOf, res));
    if (isThenable(result)) return Promise.resolve(result).then((answered) => sendReply(res, toReply(answered ?? NO_ANSWER)));
    sendReply(res, toReply(result ?? NO_ANSWER));
  };
}

/** A route request's id: its `X-Request-Id` header, else a new UUID. */
function requestIdOf(res: ServerResponse): string {
  const given = res.req.headers['x-request-id'];
  return typeof given === 'string' ? given : randomUUID();
}

const NO_ANSWER: RouteResponse = Object.freeze({});

/**
 * The request as a route sees it; what needs parsing (URL, query, distinct headers, certificate) is
 * read on first use. A class rather than an object literal with getters: one small object per request.
 */
class HostRouteRequest implements RouteRequest {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly #req: IncomingMessage;
  #url: URL | undefined;

  constructor(
    req: IncomingMessage,
    readonly body: Buffer,
    readonly params: Params,
  ) {
    this.#req = req;
    this.method = req.method ?? 'GET';
    this.headers = req.headers;
  }

  get path(): string {
    return this.#parsed().pathname;
  }

  get query(): URLSearchParams {
    return this.#parsed().searchParams;
  }

  get headersDistinct(): RouteRequest['headersDistinct'] {
    return this.#req.headersDistinct;
  }

  get peerCertificate(): X509Certificate | undefined {
    return peerCertificateOf(this.#req);
  }

  json(): unknown {
    return parseJson(this.body.toString('utf8'), `request body (${this.headers['content-type'] ?? NO_CONTENT_TYPE})`);
  }

  #parsed(): URL {
    return (this.#url ??= new URL(this.#req.url ?? '/', 'http://host'));
  }
}

/** The client certificate of a TLS connection (only sent when the server asked for one). */
export function peerCertificateOf(req: IncomingMessage): X509Certificate | undefined {
  const socket = req.socket as Partial<TLSSocket>;
  if (socket.encrypted !== true || socket.getPeerX509Certificate === undefined) return undefined;
  return socket.getPeerX509Certificate();
}

/** Buffers and strings go out as they are, anything else as JSON; no body and no status is 204. */
export function toReply({ status, headers = {}, body }: RouteResponse): Reply {
  if (body === undefined) return { status: status ?? 204, headers, body: undefined };
  if (Buffer.isBuffer(body)) return { status: status ?? 200, headers: withType(headers, 'application/octet-stream'), body };
  if (typeof body === 'string') return { status: status ?? 200, headers: withType(headers, 'text/plain; charset=utf-8'), body };
  return { status: status ?? 200, headers: withType(headers, JSON_CONTENT_TYPE), body: JSON.stringify(body) };
}

function withType(headers: Readonly<Record<string, string>>, type: string): Readonly<Record<string, string>> {
  const hasType = Object.keys(headers).some((h) => h.toLowerCase() === 'content-type');
  return hasType ? headers : { ...headers, 'content-type': type };
}
