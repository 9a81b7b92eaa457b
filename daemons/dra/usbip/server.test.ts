import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { waitFor } from '../../../shared/testing/wait.js';
import { writeFixtureSysfs, type FixtureDevice } from '../discovery/index.js';
import { Registry } from '../../../shared/metrics/index.js';
import { normalizeAddress, type ImportAuthorizer, type ImportRequest } from './authorize.js';
import { importRemote, listRemote } from './client.js';
import { FakeKernelExport } from './fake-kernel-export.js';
import { readMessage, writeAll } from './framing.js';
import { encodeImportRequest } from './op-codec.js';
import { OpStatus, UsbipProtocolError } from './protocol.js';
import { startUsbipServer, type UsbipServer, type UsbipServerOptions } from './server.js';
import { UsbipMetrics } from './metrics.js';
import { cmdSubmit, decodeUrb, DIR_IN, encodeUrb } from './urb-codec.js';

const log = pino({ level: 'silent' });
const SECRET = Buffer.alloc(32, 7);
const RECEIVER: FixtureDevice = {
  busId: '3-2',
  busNum: 3,
  devNum: 2,
  vendorId: '046d',
  productId: 'c52b',
  speed: '12',
  product: 'USB Receiver',
  interfaces: [{ class: '03', subClass: '01', protocol: '02' }],
};
const TOKEN: FixtureDevice = { busId: '1-1.4', busNum: 1, devNum: 5, vendorId: '1050', productId: '0407', speed: '480' };
const IMPORTED_HERE: FixtureDevice = { busId: '5-1', busNum: 5, devNum: 2, vendorId: '0781', productId: '5567', viaVhci: true };

let root: string;
let kernel: FakeKernelExport;
let server: UsbipServer | undefined;
const sockets: { destroy(): void }[] = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'usbip-server-'));
  await writeFixtureSysfs(root, [RECEIVER, TOKEN, IMPORTED_HERE]);
  kernel = new FakeKernelExport(new Map([['3-2', { idVendor: 0x046d, idProduct: 0xc52b }]]));
});

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
  server = undefined;
  await rm(root, { recursive: true, force: true });
});

async function start(extra: Partial<UsbipServerOptions> = {}): Promise<UsbipServer> {
  server = await startUsbipServer({ host: '127.0.0.1', port: 0, sysRoot: root, kernel, log, requestTimeoutMs: 5_000, ...extra });
  return server;
}

/** Send raw bytes, return everything the server sent until it closed. */
function exchange(port: number, bytes: Buffer, opts: { closeAfterWrite?: boolean } = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.write(bytes);
      if (opts.closeAfterWrite === true) s.end();
    });
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', reject);
    s.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

const peer = (port: number, secret?: Buffer): { host: string; port: number; secret: Buffer | undefined } => ({ host: '127.0.0.1', port, secret });

describe('devlist', () => {
  it("lists the node's devices from sysfs with busid, ids and interfaces, but not devices imported here", async () => {
    const { port } = await start();
    const list = await listRemote(peer(port));
    expect(list.map((e) => e.device.busId)).toEqual(['1-1.4', '3-2']);
    const receiver = list.find((e) => e.device.busId === '3-2');
    expect(receiver?.device).toMatchObject({ busNum: 3, devNum: 2, idVendor: 0x046d, idProduct: 0xc52b, speed: 2, bNumInterfaces: 1 });
    expect(receiver?.device.path).toMatch(/^\/sys\/devices\/.*\/3-2$/);
    expect(receiver?.interfaces).toEqual([{ bInterfaceClass: 3, bInterfaceSubClass: 1, bInterfaceProtocol: 2 }]);
    expect(kernel.calls).toEqual([]);
  });
});

describe('import', () => {
  it('binds the device to usbip-host, hands the socket over and answers with the device record', async () => {
    const { port } = await start();
    const { socket, device } = await importRemote({ ...peer(port), busId: '3-2' });
    sockets.push(socket);
    expect(device).toMatchObject({ busId: '3-2', busNum: 3, devNum: 2, idVendor: 0x046d, speed: 2 });
    expect(kernel.calls).toEqual(['bind 3-2', 'handOver 3-2', 'release 3-2']);
    expect(kernel.states.get('3-2')).toBe('used');

    // The URB phase continues on the same connection, now served by the (fake) stub.
    await writeAll(
      socket,
      encodeUrb(cmdSubmit({ seqnum: 1, devid: (3 << 16) | 2, direction: DIR_IN, transferBufferLength: 18, setup: Buffer.from('8006000100001200', 'hex') })),
    );
    const reply = await readMessage(socket, (b) => decodeUrb(b, 0, { directionOf: () => DIR_IN }), { timeoutMs: 10_000, what: 'RET_SUBMIT' });
    expect(reply).toMatchObject({ command: 'RET_SUBMIT', seqnum: 1, status: 0, actualLength: 18 });
    expect(reply.command === 'RET_SUBMIT' && reply.data.readUInt16LE(8)).toBe(0x046d);
  });

  it('refuses a second import of a busy device with ST_DEV_BUSY and leaves it with the first peer', async () => {
    const { port } = await start();
    const first = await importRemote({ ...peer(port), busId: '3-2' });
    sockets.push(first.socket);
    const second = importRemote({ ...peer(port), busId: '3-2' });
    await expect(second).rejects.toMatchObject({ problem: 'status', opStatus: OpStatus.DEV_BUSY });
    expect(kernel.calls).toEqual(['bind 3-2', 'handOver 3-2', 'release 3-2']);
    expect(kernel.states.get('3-2')).toBe('used');
  });

  it('makes the device importable again once the first peer disconnects', async () => {
    const { port } = await start();
    const first = await importRemote({ ...peer(port), busId: '3-2' });
    first.socket.destroy();
    await waitFor('device available again', () => kernel.states.get('3-2') === 'available');
    const again = await importRemote({ ...peer(port), busId: '3-2' });
    sockets.push(again.socket);
    expect(kernel.calls.filter((c) => c === 'bind 3-2')).toHaveLength(1);
  });

  it('answers ST_NODEV for an unknown busid, a device imported from elsewhere, and a busid that is a path', async () => {
    const { port } = await start();
    for (const busId of ['9-9', '5-1', '../../../etc']) {
      await expect(importRemote({ ...peer(port), busId })).rejects.toMatchObject({ problem: 'status', opStatus: OpStatus.NODEV });
    }
    expect(kernel.calls).toEqual([]);
  });

  it('answers ST_ERROR when the kernel refuses the socket, and gives the device back to its driver', async () => {
    const { port } = await start();
    kernel.failNext.add('handOver');
    await expect(importRemote({ ...peer(port), busId: '1-1.4' })).rejects.toMatchObject({ opStatus: OpStatus.ERROR });
    expect(kernel.calls).toEqual(['bind 1-1.4', 'handOver 1-1.4', 'unbind 1-1.4']);
    expect(kernel.states.has('1-1.4')).toBe(false);
  });

  it('answers ST_DEV_ERR when usbip-host reports the device in error', async () => {
    const { port } = await start();
    kernel.states.set('3-2', 'error');
    await expect(importRemote({ ...peer(port), busId: '3-2' })).rejects.toMatchObject({ opStatus: OpStatus.DEV_ERR });
    expect(kernel.states.get('3-2')).toBe('error');
  });
});

describe('bad requests', () => {
  it('answers a wrong protocol version with an ST_ERROR import reply and closes', async () => {
    const { port } = await start();
    const request = encodeImportRequest('3-2');
    request.writeUInt16BE(0x0106, 0);
    expect(await exchange(port, request)).toEqual(Buffer.from('0111000300000005', 'hex'));
    expect(kernel.calls).toEqual([]);
  });

  it('closes without a reply on an unknown operation, and on a request cut short by the peer', async () => {
    const { port } = await start();
    expect(await exchange(port, Buffer.from('0111800900000000', 'hex'))).toEqual(Buffer.alloc(0));
    expect(await exchange(port, encodeImportRequest('3-2').subarray(0, 20), { closeAfterWrite: true })).toEqual(Buffer.alloc(0));
    expect(kernel.calls).toEqual([]);
  });

  it('closes a connection that sends nothing within the request timeout', async () => {
    const { port } = await start({ requestTimeoutMs: 200 });
    expect(await exchange(port, Buffer.alloc(0))).toEqual(Buffer.alloc(0));
  });

  it('keeps serving after every bad peer', async () => {
    const { port } = await start();
    await exchange(port, Buffer.from('ffffffffffffffff', 'hex'));
    await exchange(port, encodeImportRequest('3-2').subarray(0, 3), { closeAfterWrite: true });
    expect((await listRemote(peer(port))).length).toBe(2);
  });
});

describe('shared-secret authentication', () => {
  it('imports after the handshake when both nodes hold the secret', async () => {
    const { port } = await start({ secret: SECRET });
    const { socket, device } = await importRemote({ ...peer(port, SECRET), busId: '3-2' });
    sockets.push(socket);
    expect(device.busId).toBe('3-2');
  });

  it('refuses a peer with the wrong secret before any USB/IP byte, device untouched', async () => {
    const { port } = await start({ secret: SECRET });
    const error = await importRemote({ ...peer(port, Buffer.alloc(32, 8)), busId: '3-2' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsbipProtocolError);
    expect((error as Error).message).toMatch(/handshake/);
    expect(kernel.calls).toEqual([]);
  });

  it("refuses a forged proof from a client that ignores the server's own, and never reads the import sent after it", async () => {
    const { port } = await start({ secret: SECRET });
    // Hello with a nonce, a proof made without the secret, and an import right behind it, all at once.
    const forged = Buffer.concat([Buffer.from('USBIPAU1', 'latin1'), Buffer.alloc(32, 1), Buffer.alloc(32, 2), encodeImportRequest('3-2')]);
    const answer = await exchange(port, forged);
    expect(answer.length).toBe(32 + 32 + 1); // server nonce, server proof, verdict; then closed
    expect(answer.at(-1)).toBe(1);
    expect(kernel.calls).toEqual([]);
  });

  it('answers ST_NA to an import without handshake (the stock client), and to its devlist unless allowed', async () => {
    const { port } = await start({ secret: SECRET });
    await expect(importRemote({ ...peer(port), busId: '3-2' })).rejects.toMatchObject({ opStatus: OpStatus.NA });
    await expect(listRemote(peer(port))).rejects.toMatchObject({ opStatus: OpStatus.NA });
    expect(kernel.calls).toEqual([]);
    await server?.close();
    const open = await start({ secret: SECRET, anonymousDevlist: true });
    expect((await listRemote(peer(open.port))).length).toBe(2);
    await expect(importRemote({ ...peer(open.port), busId: '3-2' })).rejects.toMatchObject({ opStatus: OpStatus.NA });
  });

  it('refuses a handshake when this node has no secret, so the client never believes it authenticated', async () => {
    const { port } = await start();
    await expect(importRemote({ ...peer(port, SECRET), busId: '3-2' })).rejects.toThrow(/handshake/);
  });

  it('survives a peer that disconnects in the middle of the handshake', async () => {
    const { port } = await start({ secret: SECRET });
    await exchange(port, Buffer.from('USBIPAU1' + 'x'.repeat(10)), { closeAfterWrite: true });
    await exchange(port, Buffer.concat([Buffer.from('USBIPAU1'), Buffer.alloc(32)]), { closeAfterWrite: true });
    const { socket } = await importRemote({ ...peer(port, SECRET), busId: '1-1.4' });
    sockets.push(socket);
    expect(kernel.states.get('1-1.4')).toBe('used');
  });
});

describe('the import authorizer', () => {
  /** Allows 1-1.4 to 127.0.0.1 only; 3-2 is held by nobody; 9-9 cannot be checked (the apiserver is down). */
  const seen: ImportRequest[] = [];
  const authorizer: ImportAuthorizer = {
    authorize: (request) => {
      seen.push(request);
      if (request.busId === '3-2')
        return Promise.resolve({ allowed: false, reason: 'not-allocated', message: 'device usb-3-2 is allocated to no ResourceClaim' });
      if (request.busId === '5-5') return Promise.reject(new Error('apiserver unreachable'));
      return Promise.resolve(
        normalizeAddress(request.peerAddress) === '127.0.0.1'
          ? { allowed: true, claim: 'ns/claim' }
          : { allowed: false, reason: 'other-node', message: 'peer is not the node of a claim holding the device' },
      );
    },
  };

  it('asks before binding, with the busid and the TCP peer address; a denial is ST_NA, counted by reason, nothing bound', async () => {
    seen.length = 0;
    const registry = new Registry();
    const metrics = new UsbipMetrics(registry);
    const { port } = await start({ secret: SECRET, authorizer, metrics });
    await expect(importRemote({ ...peer(port, SECRET), busId: '3-2' })).rejects.toMatchObject({ opStatus: OpStatus.NA });
    expect(kernel.calls).toEqual([]);
    expect(seen.map((r) => [r.busId, normalizeAddress(r.peerAddress)])).toEqual([['3-2', '127.0.0.1']]);
    const text = await registry.expose();
    expect(text).toContain('d8_virtualization_dra_usbip_import_denials_total{reason="not-allocated"} 1');
    expect(text).toContain('d8_virtualization_dra_usbip_requests_total{op="import",result="ST_NA"} 1');
    // The server keeps serving: the allowed device is imported on the next connection.
    const { socket } = await importRemote({ ...peer(port, SECRET), busId: '1-1.4' });
    sockets.push(socket);
    expect(kernel.states.get('1-1.4')).toBe('used');
  });

  it('refuses with ST_NA when the authorizer cannot decide (lookup-failed), and never asks for unknown busids or unauthenticated peers', async () => {
    seen.length = 0;
    const registry = new Registry();
    const { port } = await start({ secret: SECRET, authorizer, metrics: new UsbipMetrics(registry) });
    await expect(importRemote({ ...peer(port, SECRET), busId: '9-9' })).rejects.toMatchObject({ opStatus: OpStatus.NODEV });
    await expect(importRemote({ ...peer(port), busId: '1-1.4' })).rejects.toMatchObject({ opStatus: OpStatus.NA });
    expect(seen).toEqual([]);
    await writeFixtureSysfs(root, [{ busId: '5-5', busNum: 5, devNum: 5, vendorId: '0781', productId: '5567' }]);
    await expect(importRemote({ ...peer(port, SECRET), busId: '5-5' })).rejects.toMatchObject({ opStatus: OpStatus.NA });
    expect(await registry.expose()).toContain('d8_virtualization_dra_usbip_import_denials_total{reason="lookup-failed"} 1');
    expect(kernel.calls).toEqual([]);
  });
});

describe('normalizeAddress', () => {
  it('compares IPv4-mapped IPv6 as IPv4, without brackets or case', () => {
    expect(normalizeAddress('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(normalizeAddress('[FD00::1]')).toBe('fd00::1');
    expect(normalizeAddress(' 10.0.0.9 ')).toBe('10.0.0.9');
    expect(normalizeAddress('::1')).toBe('::1');
  });
});
