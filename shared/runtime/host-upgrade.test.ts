import { connect } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { defineFunction, serve } from './index.js';
import { answerOnSocket } from './http/upgrade.js';

const TEST_ENV = { PORT: '0', HOST: '127.0.0.1', METRICS_AUTH: 'none', DRAIN_TIMEOUT_MS: '2000' };

/** A raw client: send `text`, collect everything until the server ends the connection. */
function exchange(port: number, text: string, onData?: (all: string, write: (s: string) => void) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let all = '';
    socket.setEncoding('utf8').on('data', (c: string) => {
      all += c;
      onData?.(all, (s) => socket.write(s));
    });
    socket.on('close', () => resolve(all));
    socket.on('error', reject);
  });
}

const upgradeRequest = 'GET /stream HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n';

describe('upgrade requests', () => {
  it('hand the socket to the function, whose stream is asked to end when draining starts', async () => {
    const ended: string[] = [];
    const fn = defineFunction({
      name: 'upgrader',
      config: z.object({}),
      routes: [{ method: 'get', path: '/plain', handle: () => ({ body: 'plain' }) }],
      upgrade: ({ socket, head }, { signal }) => {
        socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
        if (head.length > 0) socket.write(head);
        socket.on('data', (d: Buffer) => socket.write(d));
        signal.addEventListener('abort', () => {
          ended.push('asked to end');
          socket.end('bye');
        });
      },
    });
    const server = await serve(fn, { env: TEST_ENV });
    let closing: Promise<unknown> | undefined;
    const seen = await exchange(server.port, upgradeRequest, (all, write) => {
      if (all.endsWith('\r\n\r\n')) write('ping');
      if (all.endsWith('ping') && closing === undefined) closing = server.close();
    });
    expect(seen).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n[\s\S]*\r\n\r\npingbye$/);
    expect(ended).toEqual(['asked to end']);
    expect(await closing).toMatchObject({ clean: true });
  });

  it('answer 500 when the handler throws, and the server keeps serving', async () => {
    const fn = defineFunction({
      name: 'thrower',
      config: z.object({}),
      routes: [{ method: 'get', path: '/plain', handle: () => ({ body: 'plain' }) }],
      upgrade: () => {
        throw new Error('boom');
      },
    });
    const server = await serve(fn, { env: TEST_ENV });
    try {
      expect(await exchange(server.port, upgradeRequest)).toMatch(/^HTTP\/1\.1 500 Internal Server Error\r\n/);
      expect(await exchange(server.port, 'GET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/\r\n\r\nplain$/);
    } finally {
      await server.close();
    }
  });

  it('destroys a stream that ignores the request to end, at the drain deadline', async () => {
    const fn = defineFunction({
      name: 'stubborn',
      config: z.object({}),
      routes: [{ method: 'get', path: '/plain', handle: () => ({}) }],
      upgrade: ({ socket }) => {
        socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
      },
    });
    const server = await serve(fn, { env: { ...TEST_ENV, DRAIN_TIMEOUT_MS: '200' } });
    let closing: Promise<unknown> | undefined;
    await exchange(server.port, upgradeRequest, (all) => {
      if (all.endsWith('\r\n\r\n') && closing === undefined) closing = server.close();
    });
    expect(await closing).toMatchObject({ drained: false });
  });
});

describe('answerOnSocket', () => {
  it('writes an HTTP error with a JSON body on a socket nothing was written to', async () => {
    const fn = defineFunction({
      name: 'refuser',
      config: z.object({}),
      routes: [{ method: 'get', path: '/plain', handle: () => ({}) }],
      upgrade: ({ socket }) => answerOnSocket(socket, 404, 'no stream here'),
    });
    const server = await serve(fn, { env: TEST_ENV });
    try {
      const answer = await exchange(server.port, upgradeRequest);
      expect(answer).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
      expect(JSON.parse(answer.split('\r\n\r\n')[1])).toEqual({ error: { code: 'REFUSED', message: 'no stream here' } });
    } finally {
      await server.close();
    }
  });
});
