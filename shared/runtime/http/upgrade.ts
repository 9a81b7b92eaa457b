import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Drain } from '../drain.js';
import type { FunctionContext, UpgradeHandler } from '../types.js';
import { peerCertificateOf } from './routes.js';

/**
 * Serve HTTP Upgrade requests with the function's handler: the handler owns the socket; its signal
 * aborts when draining starts. A handler that throws gets the socket answered 500 (when nothing was
 * written yet) and closed.
 */
export function serveUpgrades<Cfg, S>(server: Server, handler: UpgradeHandler<Cfg, S>, base: FunctionContext<Cfg, S>, drain: Drain): void {
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const requestId = (request.headers['x-request-id'] as string | undefined) ?? randomUUID();
    const log = base.log.child({ requestId });
    const signal = drain.trackStream(socket);
    socket.on('error', (err) => log.debug({ err }, 'stream socket error'));
    const ctx = { ...base, log, signal };
    void (async () => {
      try {
        await handler({ request, socket, head, peerCertificate: peerCertificateOf(request) }, ctx);
      } catch (err: unknown) {
        log.error({ err }, 'upgrade handler failed');
        answerOnSocket(socket, 500, 'internal error');
      }
    })();
  });
}

/** An HTTP error answer written on a socket that was not upgraded (yet), then the socket ends. */
export function answerOnSocket(socket: Duplex, status: number, message: string, body?: string): void {
  if (socket.destroyed) return;
  const text = body ?? JSON.stringify({ error: { code: status >= 500 ? 'UNAVAILABLE' : 'REFUSED', message } });
  if (socket.writable && (socket as { bytesWritten?: number }).bytesWritten === 0) {
    socket.end(
      `HTTP/1.1 ${status} ${reasonOf(status)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  } else {
    socket.destroy();
  }
}

function reasonOf(status: number): string {
  const reasons: Record<number, string> = {
    200: 'OK',
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'Not Found',
    409: 'Conflict',
    500: 'Internal Server Error',
    503: 'Service Unavailable',
  };
  return reasons[status] ?? 'Error';
}
