/**
 * The import side's network half: connect to an exporting node, authenticate (auth.ts), then ask for
 * its device list or import one device. A successful import returns the connected socket, which the
 * caller hands to vhci_hcd (importer.ts); every failure is a UsbipProtocolError or a connection error
 * and leaves no socket open.
 */
import { connect, type Socket } from 'node:net';
import { offerHandshake } from './auth.js';
import { readMessage, writeAll } from './framing.js';
import { decodeDevlistReply, decodeImportReply, encodeDevlistRequest, encodeImportRequest, type DevlistEntry, type UsbipDevice } from './op-codec.js';
import { opStatusName, UsbipProtocolError } from './protocol.js';

export interface PeerOptions {
  readonly host: string;
  readonly port: number;
  /** Shared secret of the nodes; undefined = plain USB/IP (a server without a secret). */
  readonly secret?: Buffer | undefined;
  /** Connect, handshake and each reply must complete within this long (default 10 s). */
  readonly timeoutMs?: number;
}

export interface Imported {
  readonly socket: Socket;
  readonly device: UsbipDevice;
}

export async function connectPeer(opts: PeerOptions): Promise<Socket> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect({ host: opts.host, port: opts.port, noDelay: true, keepAlive: true });
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`USB/IP peer ${opts.host}:${opts.port} did not accept the connection within ${timeoutMs} ms`));
    }, timeoutMs);
    s.once('connect', () => {
      clearTimeout(timer);
      s.off('error', onError);
      resolve(s);
    });
    const onError = (err: Error): void => {
      clearTimeout(timer);
      reject(new Error(`cannot connect to USB/IP peer ${opts.host}:${opts.port}: ${err.message}`, { cause: err }));
    };
    s.once('error', onError);
  });
  socket.on('error', () => undefined); // surfaced by the reads and writes that follow
  try {
    if (opts.secret !== undefined) await offerHandshake(socket, opts.secret, timeoutMs);
    return socket;
  } catch (err: unknown) {
    socket.destroy();
    throw err;
  }
}

export async function listRemote(opts: PeerOptions): Promise<DevlistEntry[]> {
  const socket = await connectPeer(opts);
  try {
    await writeAll(socket, encodeDevlistRequest());
    return await readMessage(socket, decodeDevlistReply, { timeoutMs: opts.timeoutMs ?? 10_000, what: 'OP_REP_DEVLIST' });
  } finally {
    socket.destroy();
  }
}

/** Import `busId`; on success the socket is paused, its next bytes are the URB phase. */
export async function importRemote(opts: PeerOptions & { readonly busId: string }): Promise<Imported> {
  const socket = await connectPeer(opts);
  try {
    await writeAll(socket, encodeImportRequest(opts.busId));
    const reply = await readMessage(socket, decodeImportReply, { timeoutMs: opts.timeoutMs ?? 10_000, what: 'OP_REP_IMPORT' });
    if (reply.device === undefined) {
      throw new UsbipProtocolError('status', `${opts.host}:${opts.port} refused the import of ${opts.busId}: ${opStatusName(reply.status)}`, {
        opStatus: reply.status,
      });
    }
    if (reply.device.busId !== opts.busId) {
      throw new UsbipProtocolError('unexpected', `asked for ${opts.busId}, ${opts.host}:${opts.port} answered with ${reply.device.busId}`);
    }
    return { socket, device: reply.device };
  } catch (err: unknown) {
    socket.destroy();
    throw err;
  }
}
