import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readAll } from './body.js';

/** A server that answers each path with a body written its own way. */
const writers: Record<string, (res: http.ServerResponse) => void> = {
  '/sized': (res) => {
    res.writeHead(200, { 'content-length': 11 });
    res.end('hello world');
  },
  '/chunked': (res) => {
    res.writeHead(200);
    res.write('hello ');
    setImmediate(() => res.end('world'));
  },
  '/big': (res) => {
    res.writeHead(200);
    res.end(Buffer.alloc(64 * 1024, 'x'));
  },
  '/cut': (res) => {
    res.writeHead(200, { 'content-length': 100 });
    res.write('only part');
    setImmediate(() => res.destroy());
  },
};

let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => writers[req.url ?? '']?.(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function get(path: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => http.get(`${base}${path}`, { agent: false }, resolve).on('error', reject));
}

const tooLarge = (): Error => new Error('over the test limit of 1024 bytes');

describe('readAll', () => {
  it('reads a body with a Content-Length and a chunked one whole', async () => {
    expect((await readAll(await get('/sized'), { limit: 1024, tooLarge })).toString()).toBe('hello world');
    expect((await readAll(await get('/chunked'), { limit: 1024, tooLarge })).toString()).toBe('hello world');
  });

  it('puts the bytes already received in front of the rest', async () => {
    expect((await readAll(await get('/chunked'), { limit: 1024, tooLarge }, Buffer.from('>> '))).toString()).toBe('>> hello world');
  });

  it('refuses a body past the limit with the caller’s error, also when the bytes already received pass it', async () => {
    await expect(readAll(await get('/big'), { limit: 1024, tooLarge })).rejects.toThrow('over the test limit of 1024 bytes');
    await expect(readAll(await get('/sized'), { limit: 1024, tooLarge }, Buffer.alloc(2048))).rejects.toThrow('over the test limit');
  });

  it('names a connection that closes before the body ends', async () => {
    await expect(readAll(await get('/cut'), { limit: 1024, tooLarge })).rejects.toThrow(/closed before the body ended|aborted/);
  });
});
