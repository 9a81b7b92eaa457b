/**
 * Streaming subresources (console, vnc, portforward) over WebSocket, as the original's Go client dials
 * them: subprotocol `plain.virtualization.deckhouse.io`, binary messages carrying raw bytes. The
 * handshake carries the kubeconfig's credentials (client certificate, token) like any other request.
 */
import type { Readable, Writable } from 'node:stream';
import WebSocket from 'ws';
import { UnavailableError } from '../errors/index.js';
import { apiError, statusFromBody, transportError } from '../kube/errors.js';
import { readBody } from '../kube/rest.js';
import type { Connection } from './connection.js';
import { InterruptedError, OperationFailedError } from './exit-codes.js';
import { subresourcePath } from './subresources.js';

export const STREAM_PROTOCOL = 'plain.virtualization.deckhouse.io';
export type StreamKind = 'console' | 'vnc' | 'portforward';

export interface StreamTarget {
  vm: string;
  kind: StreamKind;
  query?: Record<string, string | number>;
}

const HANDSHAKE_TIMEOUT_MS = 30_000;

/** Open the WebSocket; resolves once the server accepted the upgrade, rejects with a classified error. */
export async function openStream(conn: Connection, target: StreamTarget, signal: AbortSignal): Promise<WebSocket> {
  const url = new URL(conn.server + subresourcePath(conn.namespace, target.vm, target.kind));
  url.protocol = url.protocol === 'http:' ? 'ws:' : 'wss:';
  for (const [key, value] of Object.entries(target.query ?? {})) url.searchParams.set(key, String(value));
  const options: WebSocket.ClientOptions = { perMessageDeflate: false, handshakeTimeout: HANDSHAKE_TIMEOUT_MS };
  await conn.kubeConfig.applyToHTTPSOptions(options);
  const what = `${target.kind} VirtualMachine ${conn.namespace}/${target.vm}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [STREAM_PROTOCOL], options);
    const onAbort = (): void => {
      ws.terminate();
      reject(new InterruptedError(`${what}: interrupted`));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = (): void => signal.removeEventListener('abort', onAbort);
    ws.once('open', () => {
      settle();
      // Hold what the server sends at once (a console's prompt) until splice() listens.
      ws.pause();
      resolve(ws);
    });
    // Refused upgrades (401, 403, 404 naming the VM, 503 for a backend that is down) carry a Status body.
    ws.once('unexpected-response', (req, res) => {
      settle();
      readBody(res)
        .catch(() => '')
        .then((text) => reject(apiError(what, statusFromBody(res.statusCode ?? 0, text))), reject)
        .finally(() => req.destroy());
    });
    ws.once('error', (err) => {
      settle();
      reject(transportError(what, err, false));
    });
  });
}

/** How a session ended, from the close frame: normal ends are undefined, the rest a classified error. */
export function closeError(what: string, code: number, reason: string): Error | undefined {
  if (code === 1000 || code === 1005) return undefined;
  const text = `${what}: closed by the server (${code}${reason ? ` ${reason}` : ''})`;
  // Going away, internal error, try again later, bad gateway; 1006 is a connection lost without a close frame.
  if ([1001, 1006, 1011, 1012, 1013, 1014].includes(code)) return new UnavailableError(text);
  return new OperationFailedError(text);
}

/** Pause local input while this much is queued for the server. */
const HIGH_WATER_BYTES = 1 << 20;

/**
 * Carry bytes both ways between a local input/output and the stream until either side ends: input
 * chunks go as binary messages, messages are written to output, both with backpressure. Resolves
 * when the server closed normally or the input ended; rejects with closeError's classification.
 */
export function splice(ws: WebSocket, input: Readable, output: Writable, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer | string): void => {
      if (ws.readyState !== WebSocket.OPEN) return;
      ws.send(chunk, { binary: true }, () => {
        if (ws.bufferedAmount < HIGH_WATER_BYTES) input.resume();
      });
      if (ws.bufferedAmount >= HIGH_WATER_BYTES) input.pause();
    };
    const onEnd = (): void => ws.close(1000);
    input.on('data', onData);
    input.once('end', onEnd);
    input.once('error', onEnd);
    ws.on('message', (data: Buffer) => {
      if (!output.write(data)) {
        ws.pause();
        output.once('drain', () => ws.resume());
      }
    });
    ws.on('error', () => undefined); // the close event that follows carries the classification
    ws.resume();
    ws.once('close', (code: number, reason: Buffer) => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onEnd);
      const err = closeError(what, code, reason.toString('utf8'));
      if (err) reject(err);
      else resolve();
    });
  });
}
