import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import WebSocket, { WebSocketServer } from 'ws';
import { rootLogger } from '../../shared/log/index.js';
import { waitFor } from '../../shared/testing/wait.js';
import { relay, splice, type RelayEnd } from './stream.js';

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    for (const c of s.clients) c.terminate();
    await new Promise((r) => s.close(r));
  }
});

/** A connected pair: the side a peer holds, and the server side the relay gets. */
async function pair(): Promise<{ peer: WebSocket; served: WebSocket }> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  servers.push(server);
  await new Promise((r) => server.once('listening', r));
  const served = new Promise<WebSocket>((resolve) => server.once('connection', resolve));
  const peer = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await new Promise((r) => peer.once('open', r));
  return { peer, served: await served };
}

const closeOf = (ws: WebSocket): Promise<[number, string]> =>
  new Promise((r) => ws.once('close', (code: number, reason: Buffer) => r([code, reason.toString()])));

/** A user's client, and virt-api, with the relay between them. */
async function session(
  signal = new AbortController().signal,
  highWaterBytes = 1 << 20,
): Promise<{ user: WebSocket; virtApi: WebSocket; ended: Promise<RelayEnd> }> {
  const [client, backend] = [await pair(), await pair()];
  const ended = relay(client.served, backend.peer, { highWaterBytes, signal, log: rootLogger });
  return { user: client.peer, virtApi: backend.served, ended };
}

describe('relay', () => {
  it('carries binary messages both ways, in order, and passes a clean close code on', async () => {
    const { user, virtApi, ended } = await session();
    const atVirtApi: Buffer[] = [];
    virtApi.on('message', (d: Buffer) => {
      atVirtApi.push(d);
      virtApi.send(Buffer.concat([Buffer.from('<'), d]));
    });
    const atUser: string[] = [];
    user.on('message', (d: Buffer) => atUser.push(d.toString()));
    for (const m of ['a', 'b', 'c']) user.send(Buffer.from(m));
    await waitFor('the echoes', () => Promise.resolve(atUser.length === 3 ? true : undefined));
    expect(atUser).toEqual(['<a', '<b', '<c']);
    const virtApiClosed = closeOf(virtApi);
    user.close(4001, 'bye');
    expect(await virtApiClosed).toEqual([4001, 'bye']);
    expect(await ended).toEqual({ by: 'client', code: 4001 });
  });

  it('closes the user with 1011 naming virt-api when virt-api breaks off without a close frame', async () => {
    const { user, virtApi, ended } = await session();
    const userClosed = closeOf(user);
    virtApi.terminate();
    expect(await userClosed).toEqual([1011, 'virt-api connection lost']);
    expect(await ended).toEqual({ by: 'virt-api', code: 1006 });
  });

  it('closes both sides with 1001 when the server shuts down', async () => {
    const controller = new AbortController();
    const { user, virtApi, ended } = await session(controller.signal);
    const [userClosed, virtApiClosed] = [closeOf(user), closeOf(virtApi)];
    controller.abort();
    expect(await userClosed).toEqual([1001, 'server shutting down']);
    expect(await virtApiClosed).toEqual([1001, 'server shutting down']);
    expect(await ended).toEqual({ by: 'shutdown', code: 1001 });
  });

  it('delivers everything a fast sender sends to a side that reads slowly (no loss under backpressure)', async () => {
    const { user, virtApi } = await session(undefined, 64 * 1024);
    let received = 0;
    virtApi.on('message', (d: Buffer) => (received += d.length));
    const chunk = Buffer.alloc(32 * 1024, 7);
    for (let i = 0; i < 200; i++) user.send(chunk);
    await waitFor('every byte at virt-api', () => Promise.resolve(received === 200 * chunk.length ? true : undefined), { timeoutMs: 20_000 });
  });
});

const tcpServers: Server[] = [];
afterEach(async () => {
  for (const s of tcpServers.splice(0)) await new Promise((r) => s.close(r));
});

/** A connected TCP pair: the end a peer holds, and the accepted end the splice gets. */
async function tcpPair(): Promise<{ peer: Socket; served: Socket }> {
  const server = createServer({ allowHalfOpen: true });
  tcpServers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const served = new Promise<Socket>((resolve) => server.once('connection', resolve));
  const peer = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await new Promise((r) => peer.once('connect', r));
  return { peer, served: await served };
}

/** Everything a socket receives. */
function received(socket: Socket): () => Buffer {
  let all = Buffer.alloc(0);
  socket.on('data', (b: Buffer) => (all = Buffer.concat([all, b])));
  return () => all;
}

async function spliced(signal = new AbortController().signal): Promise<{ user: Socket; virtApi: Socket; ended: Promise<RelayEnd> }> {
  const [client, backend] = [await tcpPair(), await tcpPair()];
  const ended = splice(client.served, backend.peer, { signal, log: rootLogger });
  return { user: client.peer, virtApi: backend.served, ended };
}

describe('splice', () => {
  it('carries bytes both ways untouched, and a side that ends ends the other', async () => {
    const { user, virtApi, ended } = await spliced();
    const [atUser, atVirtApi] = [received(user), received(virtApi)];
    const payload = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 256));
    user.write(payload);
    await waitFor('the bytes at virt-api', () => Promise.resolve(atVirtApi().length >= payload.length ? true : undefined), { timeoutMs: 20_000 });
    expect(atVirtApi().equals(payload)).toBe(true);
    virtApi.write('back');
    await waitFor('the answer at the user', () => Promise.resolve(atUser().toString() === 'back' ? true : undefined));
    const virtApiEnded = new Promise((r) => virtApi.once('end', r));
    user.end();
    await virtApiEnded;
    virtApi.end();
    expect(await ended).toEqual({ by: 'client', code: 1000 });
  });

  it('cuts the user when virt-api breaks off', async () => {
    const { user, virtApi, ended } = await spliced();
    const userClosed = new Promise((r) => user.once('close', r));
    user.on('error', () => undefined);
    virtApi.resetAndDestroy();
    await userClosed;
    expect((await ended).by).toBe('virt-api');
  });

  it('ends both sides when the server shuts down', async () => {
    const controller = new AbortController();
    const { user, virtApi, ended } = await spliced(controller.signal);
    const [userEnded, virtApiEnded] = [new Promise((r) => user.once('end', r)), new Promise((r) => virtApi.once('end', r))];
    controller.abort();
    await Promise.all([userEnded, virtApiEnded]);
    expect(await ended).toEqual({ by: 'shutdown', code: 1001 });
    user.destroy();
    virtApi.destroy();
  });

  it('delivers everything to a side that reads slowly (no loss under backpressure)', async () => {
    const { user, virtApi } = await spliced();
    virtApi.pause();
    const chunk = Buffer.alloc(64 * 1024, 3);
    for (let i = 0; i < 100; i++) user.write(chunk);
    await waitFor('the user side to feel the backpressure', () => Promise.resolve(user.writableLength > 0 ? true : undefined));
    const got = received(virtApi);
    virtApi.resume();
    await waitFor('every byte at virt-api', () => Promise.resolve(got().length === 100 * chunk.length ? true : undefined), { timeoutMs: 20_000 });
    user.destroy();
    virtApi.destroy();
  });
});
