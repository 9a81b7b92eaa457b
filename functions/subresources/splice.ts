/** A non-WebSocket upgrade (SPDY/3.1) spliced to virt-api byte for byte. */
import type { IncomingMessage } from 'node:http';
import type { KubeObject } from '../../shared/kube/index.js';
import { answerOnSocket } from '../../shared/runtime/http/upgrade.js';
import type { UpgradeRequest } from '../../shared/runtime/index.js';
import * as api from './api.js';
import { BackendRefusedError, BackendUnavailableError } from './backend.js';
import type { RemoteUser } from './frontproxy.js';
import { track } from './lookups.js';
import type { Ctx } from './state.js';
import { splice } from './stream.js';

/** Request headers not passed on to virt-api: hop-by-hop ones, credentials and the front proxy's identity. */
const NOT_FORWARDED = new Set(['host', 'authorization', 'content-length', 'transfer-encoding', 'keep-alive', 'proxy-connection', 'te', 'trailer']);

function forwardedHeaders(request: UpgradeRequest['request']): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, values] of Object.entries(request.headersDistinct)) {
    if (values === undefined || NOT_FORWARDED.has(key) || key.startsWith('x-remote-') || key.startsWith('impersonate-')) continue;
    out[key] = values;
  }
  return out;
}

/** The 101 (or any) status line and headers of virt-api's answer, as bytes for the client's socket. */
function responseHead(res: IncomingMessage): string {
  const lines = [`HTTP/1.1 ${res.statusCode ?? 101} ${res.statusMessage ?? ''}`.trimEnd()];
  for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * A non-WebSocket upgrade (SPDY/3.1 from kubectl-style clients): the handshake goes to virt-api as it
 * came (our identity in place of the front proxy's headers), virt-api's 101 goes back to the client
 * and the bytes are spliced both ways (3.3: the original's UpgradeAwareHandler). A refusal by virt-api
 * passes through with its status and body; virt-api unreachable is 503.
 */
export async function spliceUpgrade(
  up: UpgradeRequest,
  ctx: Ctx,
  path: string,
  { vm, ...stream }: { sub: string; namespace: string; name: string; user: RemoteUser; vm: KubeObject },
): Promise<void> {
  const { request, socket, head } = up;
  const protocol = request.headers.upgrade ?? '';
  let backend;
  try {
    backend = await ctx.state.virtApi.upgrade({ method: request.method ?? 'GET', path, headers: forwardedHeaders(request) }, stream.user);
  } catch (err: unknown) {
    ctx.state.metrics.backendFailures.inc({ subresource: stream.sub });
    if (err instanceof BackendRefusedError) {
      ctx.log.info({ ...stream, user: stream.user.name, protocol, status: err.status }, 'virt-api refused the upgrade');
      if (err.contentType?.includes('json') === true) return answerOnSocket(socket, err.status, '', err.body);
      return answerOnSocket(socket, err.status, '', JSON.stringify(api.status(err.status, 'ServiceUnavailable', err.message).body));
    }
    if (err instanceof BackendUnavailableError) return answerOnSocket(socket, 503, '', JSON.stringify(api.status(503, 'ServiceUnavailable', err.message).body));
    throw err;
  }
  if (socket.destroyed) {
    backend.socket.destroy();
    return;
  }
  socket.write(responseHead(backend.response));
  if (backend.head.length > 0) socket.write(backend.head);
  if (head.length > 0) backend.socket.write(head);
  const { streams } = ctx.state.metrics;
  streams.inc({ subresource: stream.sub });
  ctx.log.info({ ...stream, user: stream.user.name, protocol }, 'stream opened');
  const session = track(ctx, stream.sub, vm, stream.user, request);
  const end = await splice(socket, backend.socket, { signal: ctx.signal, log: ctx.log });
  streams.dec({ subresource: stream.sub });
  void session?.end();
  ctx.log.info({ ...stream, user: stream.user.name, protocol, endedBy: end.by }, 'stream closed');
}
