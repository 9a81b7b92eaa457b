/** The import side's client against misbehaving exporting nodes (raw TCP servers written here). */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import { importRemote, listRemote } from './client.js';
import { encodeImportReply, encodeOpHeader } from './op-codec.js';
import { OpCode, OpStatus, UsbipProtocolError } from './protocol.js';

let server: Server | undefined;
const peers: Socket[] = [];

afterEach(async () => {
  for (const p of peers.splice(0)) p.destroy();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** A server that answers the first request bytes with `answer` (then closes unless `keepOpen`). */
async function misbehaving(answer: Buffer, keepOpen = false): Promise<number> {
  server = createServer((socket) => {
    peers.push(socket);
    socket.once('data', () => (keepOpen ? socket.write(answer) : socket.end(answer)));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

const DEVICE = {
  path: '/sys/devices/x/usb3/3-2',
  busId: '3-2',
  busNum: 3,
  devNum: 2,
  speed: 2,
  idVendor: 1,
  idProduct: 2,
  bcdDevice: 3,
  bDeviceClass: 0,
  bDeviceSubClass: 0,
  bDeviceProtocol: 0,
  bConfigurationValue: 1,
  bNumConfigurations: 1,
  bNumInterfaces: 0,
};

async function failure(work: Promise<unknown>): Promise<UsbipProtocolError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof UsbipProtocolError)) throw new Error(`expected a UsbipProtocolError, got ${String(err)}`);
  return err;
}

describe('importRemote against a misbehaving peer', () => {
  it('names a reply cut short when the peer disconnects mid-reply', async () => {
    const port = await misbehaving(encodeImportReply({ status: OpStatus.OK, device: DEVICE }).subarray(0, 100));
    const err = await failure(importRemote({ host: '127.0.0.1', port, busId: '3-2' }));
    expect(err.problem).toBe('truncated');
    expect(err.message).toBe('peer closed after 100 bytes of OP_REP_IMPORT');
  });

  it('gives up on a peer that never answers, after the timeout', async () => {
    const port = await misbehaving(Buffer.alloc(0), true);
    const err = await failure(importRemote({ host: '127.0.0.1', port, busId: '3-2', timeoutMs: 300 }));
    expect(err.message).toBe('no complete OP_REP_IMPORT within 300 ms (0 bytes received)');
  });

  it('refuses a record for another busid than asked, and another protocol version', async () => {
    const wrongBusId = await misbehaving(encodeImportReply({ status: OpStatus.OK, device: { ...DEVICE, busId: '3-3' } }));
    expect((await failure(importRemote({ host: '127.0.0.1', port: wrongBusId, busId: '3-2' }))).message).toMatch(/asked for 3-2, .* answered with 3-3$/);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    const reply = encodeOpHeader(OpCode.REP_IMPORT, 0);
    reply.writeUInt16BE(0x0106, 0);
    const wrongVersion = await misbehaving(reply);
    expect((await failure(importRemote({ host: '127.0.0.1', port: wrongVersion, busId: '3-2' }))).problem).toBe('version');
  });

  it('names a connection refused', async () => {
    const port = await misbehaving(Buffer.alloc(0));
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    await expect(listRemote({ host: '127.0.0.1', port })).rejects.toThrow(`cannot connect to USB/IP peer 127.0.0.1:${port}`);
  });
});
