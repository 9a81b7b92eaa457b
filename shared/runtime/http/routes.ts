import type { Request, RequestHandler } from 'express';
import { randomUUID, type X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { requestContext } from '../context.js';
import type { FunctionContext, Route, RouteRequest, RouteResponse } from '../types.js';
import { bodyOf } from './body.js';
import { parseJson, NO_CONTENT_TYPE } from './json.js';
import { sendReply, JSON_CONTENT_TYPE, type Reply } from './reply.js';

/** The express handler for one plain route: framing only, the route's `handle` decides. */
export function routeEndpoint<Cfg, S>(route: Route<Cfg, S>, base: FunctionContext<Cfg, S>): RequestHandler {
  return async (req, res) => {
    const requestId = req.get('x-request-id') ?? randomUUID();
    const answer = await route.handle(toRouteRequest(req), requestContext(base, requestId, res));
    sendReply(res, toReply(answer ?? {}));
  };
}

function toRouteRequest(req: Request): RouteRequest {
  const body = bodyOf(req);
  const url = new URL(req.originalUrl, 'http://host');
  return {
    method: req.method,
    path: url.pathname,
    params: req.params,
    query: url.searchParams,
    headers: req.headers,
    headersDistinct: req.headersDistinct,
    peerCertificate: peerCertificateOf(req),
    body,
    json: () => parseJson(body.toString('utf8'), `request body (${req.get('content-type') ?? NO_CONTENT_TYPE})`),
  };
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
