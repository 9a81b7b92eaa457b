/**
 * A console, VNC or port-forward session: two WebSockets (the client's, through the aggregator, and
 * virt-api's) relaying binary messages both ways. Each side is read only as fast as the other takes
 * it (a side pauses while the other has more than `highWaterBytes` queued). When one side ends, the
 * other gets a close frame: the same code for a clean close, 1011 naming virt-api when virt-api's
 * connection broke off, 1001 when this server shuts down.
 */
import type { Duplex } from 'node:stream';
import type WebSocket from 'ws';
import type { Logger } from '../../shared/log/index.js';

export interface RelayEnd {
  readonly by: 'client' | 'virt-api' | 'shutdown';
  readonly code: number;
}

/** Close codes a peer may send on (RFC 6455 7.4): others (1005, 1006, 1015) describe, never travel. */
function sendable(code: number): boolean {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}

export function relay(client: WebSocket, backend: WebSocket, opts: { highWaterBytes: number; signal: AbortSignal; log: Logger }): Promise<RelayEnd> {
  const { highWaterBytes, signal, log } = opts;
  return new Promise<RelayEnd>((resolve) => {
    let ended: RelayEnd | undefined;
    const finish = (end: RelayEnd): void => {
      if (ended !== undefined) return;
      ended = end;
      signal.removeEventListener('abort', onAbort);
      resolve(end);
    };
    const pipe = (from: WebSocket, to: WebSocket): void => {
      from.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
        if (to.readyState !== to.OPEN) return;
        to.send(data, { binary: isBinary }, () => {
          if (from.isPaused && to.bufferedAmount <= highWaterBytes / 2) from.resume();
        });
        if (to.bufferedAmount > highWaterBytes) from.pause();
      });
    };
    pipe(client, backend);
    pipe(backend, client);
    client.on('close', (code: number, reason: Buffer) => {
      finish({ by: 'client', code });
      closeWith(backend, sendable(code) ? code : 1000, reason.toString('utf8'));
    });
    backend.on('close', (code: number, reason: Buffer) => {
      finish({ by: 'virt-api', code });
      if (sendable(code)) closeWith(client, code, reason.toString('utf8'));
      else closeWith(client, 1011, 'virt-api connection lost');
    });
    client.on('error', (err) => log.debug({ err }, 'client stream error'));
    backend.on('error', (err) => log.debug({ err }, 'virt-api stream error'));
    const onAbort = (): void => {
      finish({ by: 'shutdown', code: 1001 });
      closeWith(client, 1001, 'server shutting down');
      closeWith(backend, 1001, 'server shutting down');
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Send a close frame (reason cut to the 123 bytes a frame allows); a side that does not answer it is cut after 5 s. */
function closeWith(ws: WebSocket, code: number, reason: string): void {
  if (ws.readyState === ws.CLOSED || ws.readyState === ws.CLOSING) return;
  ws.close(code, Buffer.from(reason).subarray(0, 123).toString('utf8'));
  setTimeout(() => ws.terminate(), 5_000).unref();
}

/**
 * Any other upgraded stream (SPDY as kubectl speaks it): bytes spliced both ways without interpreting
 * them, as the original's UpgradeAwareHandler does. `pipe` reads a side only as fast as the other
 * takes it. A side that ends (FIN) ends the other's writing half; a side that breaks destroys the
 * other; draining ends both (an opaque stream has no close frame) and cuts them after 5 s.
 */
export function splice(client: Duplex, backend: Duplex, opts: { signal: AbortSignal; log: Logger }): Promise<RelayEnd> {
  const { signal, log } = opts;
  return new Promise<RelayEnd>((resolve) => {
    let ended: RelayEnd | undefined;
    let closedSides = 0;
    const finish = (end: RelayEnd): void => {
      if (ended === undefined) ended = end;
      if (++closedSides < 2 && end.by !== 'shutdown') return;
      signal.removeEventListener('abort', onAbort);
      resolve(ended);
    };
    client.pipe(backend);
    backend.pipe(client);
    const watch = (side: Duplex, other: Duplex, by: RelayEnd['by']): void => {
      side.on('error', (err) => log.debug({ err }, `${by} stream error`));
      side.once('close', () => {
        const broke = !side.readableEnded;
        if (broke) other.destroy();
        finish({ by, code: broke ? 1006 : 1000 });
      });
    };
    watch(client, backend, 'client');
    watch(backend, client, 'virt-api');
    const onAbort = (): void => {
      for (const side of [client, backend]) {
        side.end();
        setTimeout(() => side.destroy(), 5_000).unref();
      }
      finish({ by: 'shutdown', code: 1001 });
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
