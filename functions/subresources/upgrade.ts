/** Consoles, VNC and port forwarding: a WebSocket relay to virt-api, or a splice for other upgrades (splice.ts). */
import { answerOnSocket } from '../../shared/runtime/http/upgrade.js';
import type { UpgradeRequest } from '../../shared/runtime/index.js';
import * as api from './api.js';
import { who } from './authentication.js';
import { BackendRefusedError, BackendUnavailableError } from './backend.js';
import { isSessionKind, lookUp, probe, subresourceOf, track } from './lookups.js';
import { OptionsError, streamUpstreamPath } from './options.js';
import { spliceUpgrade } from './splice.js';
import type { Ctx } from './state.js';
import { relay } from './stream.js';

/** The subprotocols a client may ask for: Deckhouse's, and KubeVirt's (virtctl). */
export const STREAM_PROTOCOLS = ['plain.virtualization.deckhouse.io', 'plain.kubevirt.io'] as const;
const BACKEND_PROTOCOL = 'plain.kubevirt.io';
const VM_PATH = new RegExp(`^${api.BASE_PATH.replace(/\./g, '\\.')}/namespaces/([^/]+)/virtualmachines/([^/]+)(?:/([^/]+))?/?$`);

/** Consoles, VNC and port forwarding: check, open virt-api's side, then upgrade the client's. */
export async function upgrade(up: UpgradeRequest, ctx: Ctx): Promise<void> {
  const { request, socket, head } = up;
  const fail = (answer: { status: number; body: object }): void => answerOnSocket(socket, answer.status, '', JSON.stringify(answer.body));
  const auth = who(ctx, up.peerCertificate, request.headersDistinct);
  if ('refusal' in auth) return fail(auth.refusal);
  const url = new URL(request.url ?? '/', 'http://host');
  const match = VM_PATH.exec(url.pathname);
  const sub = match?.[3] === undefined ? undefined : subresourceOf(match[3]);
  if (match === null || sub === undefined || !sub.stream) return fail(api.status(404, 'NotFound', `no stream at ${url.pathname}`));
  const [namespace, name] = [decodeURIComponent(match[1]), decodeURIComponent(match[2])];
  if (url.searchParams.get('probe') === 'true' && isSessionKind(sub.name)) {
    const answer = await probe(ctx, namespace, name, sub.name);
    return answerOnSocket(socket, answer.status ?? 200, '', JSON.stringify(answer.body));
  }
  let path: string;
  try {
    path = streamUpstreamPath(sub.name, namespace, name, url.searchParams);
  } catch (err: unknown) {
    if (err instanceof OptionsError) return fail(api.status(400, 'BadRequest', err.message));
    throw err;
  }
  const found = await lookUp(ctx, namespace, name, sub);
  if ('refusal' in found) return fail(found.refusal);
  const stream = { sub: sub.name, namespace, name, user: auth.user, vm: found.vm };
  if ((request.headers.upgrade ?? '').toLowerCase() !== 'websocket') return spliceUpgrade(up, ctx, path, stream);
  let backend;
  try {
    backend = await ctx.state.virtApi.dial(path, BACKEND_PROTOCOL, auth.user);
  } catch (err: unknown) {
    ctx.state.metrics.backendFailures.inc({ subresource: sub.name });
    if (err instanceof BackendRefusedError) return fail(api.status(err.status, 'ServiceUnavailable', err.message));
    if (err instanceof BackendUnavailableError) return fail(api.status(503, 'ServiceUnavailable', err.message));
    throw err;
  }
  if (socket.destroyed) {
    backend.terminate();
    return;
  }
  // A handshake `ws` refuses (bad key or version) never reaches the callback: virt-api's side goes too.
  let upgraded = false;
  socket.once('close', () => {
    if (!upgraded) backend.terminate();
  });
  ctx.state.sockets.handleUpgrade(request, socket, head, (client) => {
    upgraded = true;
    const { streams } = ctx.state.metrics;
    streams.inc({ subresource: sub.name });
    ctx.log.info({ sub: sub.name, namespace, name, user: auth.user.name }, 'stream opened');
    const session = track(ctx, sub.name, found.vm, auth.user, request);
    void relay(client, backend, { highWaterBytes: ctx.config.STREAM_BUFFER_BYTES, signal: ctx.signal, log: ctx.log }).then((end) => {
      streams.dec({ subresource: sub.name });
      void session?.end();
      ctx.log.info({ sub: sub.name, namespace, name, endedBy: end.by, code: end.code }, 'stream closed');
    });
  });
}
