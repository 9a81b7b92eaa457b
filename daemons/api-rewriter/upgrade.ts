/**
 * Upgraded connections (exec, attach, port-forward over SPDY or WebSocket) are tunnelled as they are:
 * the path is renamed like any other request, the bytes after the upgrade are not looked at.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { planRequest, type Renamer } from './rules/index.js';
import type { Logger } from '../../shared/log/index.js';
import type { UpstreamTarget } from './upstream.js';

const DROP = new Set(['host', 'authorization', 'proxy-authorization']);

export function createUpgradeHandler(
  renamer: Renamer,
  upstream: UpstreamTarget,
  log: Logger,
): (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    try {
      const headers: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(req.headers)) if (!DROP.has(k) && v !== undefined) headers[k] = v;
      Object.assign(headers, upstream.authHeaders());
      const plan = planRequest(renamer, req.url ?? '/');
      // Upgrades get their own connection: a tunnelled socket never goes back to the keep-alive pool.
      const upstreamReq = upstream.request({ method: req.method ?? 'GET', path: plan.upstreamUrl, headers, agent: false });
      upstreamReq.on('upgrade', (res, upSocket, upHead) => {
        socket.write(statusLines(res));
        if (upHead.length > 0) socket.write(upHead);
        if (head.length > 0) upSocket.write(head);
        upSocket.pipe(socket).on('error', () => upSocket.destroy());
        socket.pipe(upSocket).on('error', () => socket.destroy());
        upSocket.on('close', () => socket.destroy());
        socket.on('close', () => upSocket.destroy());
      });
      upstreamReq.on('response', (res) => {
        socket.write(statusLines(res));
        res.pipe(socket);
      });
      upstreamReq.on('error', (err) => {
        log.warn({ err, url: req.url }, 'upgrade to the apiserver failed');
        socket.end('HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      });
      socket.on('error', () => upstreamReq.destroy());
      upstreamReq.end();
    } catch (err: unknown) {
      log.error({ err }, 'upgrade failed');
      socket.destroy();
    }
  };
}

function statusLines(res: http.IncomingMessage): string {
  const lines = [`HTTP/1.1 ${res.statusCode ?? 502} ${res.statusMessage ?? ''}`];
  for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i] ?? ''}: ${res.rawHeaders[i + 1] ?? ''}`);
  return lines.join('\r\n') + '\r\n\r\n';
}
