/**
 * The `senders` hook of a declaration: each request to the function's routes and CloudEvent endpoint
 * is shown to the check (headers, path, peer) before its body is read. A refusal is answered at once
 * (the body is never read; the answer closes the connection); an accepted sender's name is kept with
 * the request for `ctx.sender`.
 */
import type { IncomingMessage } from 'node:http';
import type { Endpoint } from './http/exchange.js';
import { sendReply } from './http/reply.js';
import { peerCertificateOf, toReply } from './http/routes.js';
import type { FunctionContext, SenderCheck, SenderRequest } from './types.js';

const senders = new WeakMap<IncomingMessage, string>();

/** The sender the check accepted for this request, if it was asked. */
export function senderOf(req: IncomingMessage): string | undefined {
  return senders.get(req);
}

export function senderRequestOf(req: IncomingMessage, path: string): SenderRequest {
  return {
    method: req.method ?? 'GET',
    path,
    headers: req.headers,
    remoteAddress: req.socket.remoteAddress,
    get peerCertificate() {
      return peerCertificateOf(req);
    },
  };
}

/** `endpoint` behind the check; the endpoint itself when there is none. */
export function withSenderCheck<Cfg, S>(endpoint: Endpoint, check: SenderCheck<Cfg, S> | undefined, ctx: FunctionContext<Cfg, S>): Endpoint {
  if (check === undefined) return endpoint;
  return async (exchange) => {
    const verdict = await check(senderRequestOf(exchange.req, exchange.path), ctx);
    if ('refused' in verdict) {
      const reply = toReply(verdict.refused);
      sendReply(exchange.res, { ...reply, headers: { ...reply.headers, connection: 'close' } });
      return;
    }
    senders.set(exchange.req, verdict.sender);
    await endpoint(exchange);
  };
}
