/**
 * Shared-secret handshake between nodes, run on the TCP connection BEFORE the USB/IP bytes (the
 * kernel takes the plain TCP socket after the import, so TLS cannot wrap the stream; see README).
 *
 *   client -> server  "USBIPAU1" (8) | client nonce (32)                       = 40 bytes
 *   server -> client  server nonce (32) | HMAC-SHA256(k, "server" | Nc | Ns)    = 64 bytes
 *   client -> server  HMAC-SHA256(k, "client" | Nc | Ns)                        = 32 bytes
 *   server -> client  0x00 accepted | 0x01 refused (then the server closes)     =  1 byte
 *
 * Both sides prove they know k with fresh nonces from both ends (no replay), neither proof reveals k.
 * The first byte tells a handshake ('U', 0x55) from a plain USB/IP request (0x01 of version 0x0111),
 * so the stock `usbip` client still gets an answer (anonymous: devlist if allowed, never import).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import { readMessage, writeAll } from './framing.js';
import { bad, ok, short, UsbipProtocolError, type Decoded } from './protocol.js';

export const AUTH_MAGIC = Buffer.from('USBIPAU1', 'latin1');
const NONCE = 32;
const MAC = 32;
export const MIN_SECRET_BYTES = 32;

export type Peer = 'authenticated' | 'anonymous';

export function proof(secret: Buffer, role: 'server' | 'client', clientNonce: Buffer, serverNonce: Buffer): Buffer {
  return createHmac('sha256', secret).update(role).update(clientNonce).update(serverNonce).digest();
}

function sameMac(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What a server reads first: a hello (then the nonce) or the start of a plain USB/IP request (consumes nothing). */
export function decodeHello(buf: Buffer): Decoded<{ nonce: Buffer } | undefined> {
  if (buf.length === 0) return short(1);
  if (buf[0] !== AUTH_MAGIC[0]) return ok(undefined, 0);
  if (buf.length < AUTH_MAGIC.length + NONCE) return short(AUTH_MAGIC.length + NONCE);
  if (!buf.subarray(0, AUTH_MAGIC.length).equals(AUTH_MAGIC)) return bad('version', 'unknown handshake (not USBIPAU1, not USB/IP)');
  return ok({ nonce: Buffer.from(buf.subarray(AUTH_MAGIC.length, AUTH_MAGIC.length + NONCE)) }, AUTH_MAGIC.length + NONCE);
}

const fixed =
  (size: number) =>
  (buf: Buffer): Decoded<Buffer> =>
    buf.length < size ? short(size) : ok(Buffer.from(buf.subarray(0, size)), size);

/**
 * Server side. No secret configured: every peer is anonymous and a hello is refused (a client that
 * wants to authenticate must not believe it did). Rejects with UsbipProtocolError on a failed proof.
 */
export async function acceptHandshake(socket: Socket, secret: Buffer | undefined, timeoutMs: number): Promise<Peer> {
  const hello = await readMessage(socket, decodeHello, { timeoutMs, what: 'first bytes' });
  if (hello === undefined) return 'anonymous';
  if (secret === undefined) {
    await writeAll(socket, Buffer.alloc(NONCE + MAC));
    throw new UsbipProtocolError('unexpected', 'peer sent a handshake, but no shared secret is configured here');
  }
  const serverNonce = randomBytes(NONCE);
  await writeAll(socket, Buffer.concat([serverNonce, proof(secret, 'server', hello.nonce, serverNonce)]));
  const clientMac = await readMessage(socket, fixed(MAC), { timeoutMs, what: 'handshake proof' });
  if (!sameMac(clientMac, proof(secret, 'client', hello.nonce, serverNonce))) {
    await writeAll(socket, Buffer.from([1])).catch(() => undefined);
    throw new UsbipProtocolError('status', 'peer failed the shared-secret handshake (wrong secret)');
  }
  await writeAll(socket, Buffer.from([0]));
  return 'authenticated';
}

/** Client side: resolves once both sides proved the secret; rejects with UsbipProtocolError otherwise. */
export async function offerHandshake(socket: Socket, secret: Buffer, timeoutMs: number): Promise<void> {
  const clientNonce = randomBytes(NONCE);
  await writeAll(socket, Buffer.concat([AUTH_MAGIC, clientNonce]));
  const answer = await readMessage(socket, fixed(NONCE + MAC), { timeoutMs, what: 'handshake answer' });
  const serverNonce = answer.subarray(0, NONCE);
  if (!sameMac(answer.subarray(NONCE), proof(secret, 'server', clientNonce, serverNonce))) {
    throw new UsbipProtocolError('status', 'the exporting node failed the shared-secret handshake (wrong secret, or no secret configured there)');
  }
  await writeAll(socket, proof(secret, 'client', clientNonce, serverNonce));
  const verdict = await readMessage(socket, fixed(1), { timeoutMs, what: 'handshake verdict' });
  if (verdict[0] !== 0) throw new UsbipProtocolError('status', 'the exporting node refused our handshake proof (wrong secret)');
}

/** A secret file's bytes (trailing newline dropped); refuses short secrets. */
export function parseSecret(content: Buffer, source: string): Buffer {
  const secret = content.toString('latin1').endsWith('\n') ? content.subarray(0, content.length - 1) : content;
  if (secret.length < MIN_SECRET_BYTES) throw new Error(`${source}: shared secret has ${secret.length} bytes, at least ${MIN_SECRET_BYTES} needed`);
  return Buffer.from(secret);
}
