/**
 * The `senders` hook over real HTTP: a refused request is answered from its headers alone (a body
 * that never arrives does not hold the answer back) and no handler runs; an accepted one reaches the
 * handler with `ctx.sender`; health is never asked.
 */
import { request as httpRequest } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { defineFunction, serve, type ServerHandle } from './index.js';

describe('function host: the senders hook', () => {
  let host: ServerHandle;
  const handled: string[] = [];
  const asked: string[] = [];
  const def = defineFunction({
    name: 'senders-probe',
    config: z.object({}),
    senders: (request) => {
      asked.push(`${request.method} ${request.path}`);
      return request.headers.authorization === 'Bearer friend'
        ? { sender: 'friend' }
        : { refused: { status: 401, headers: { 'www-authenticate': 'Bearer' }, body: { error: { code: 'UNAUTHORIZED', message: 'no' } } } };
    },
    routes: [{ method: 'post', path: '/in', handle: (req, ctx) => (handled.push(`${ctx.sender ?? '?'} ${req.body.length}`), { body: { ok: true } }) }],
    handle: (event, ctx) => void handled.push(`${ctx.sender ?? '?'} event ${event.id}`),
  });

  beforeEach(async () => {
    handled.length = 0;
    asked.length = 0;
    host = await serve(def, { env: { PORT: '0', HOST: '127.0.0.1', METRICS_AUTH: 'none' } });
  });
  afterEach(async () => {
    await host.close();
  });

  it('answers 401 before the body has arrived, closing the connection, and runs no handler', async () => {
    const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = httpRequest(`${host.url}/in`, { method: 'POST', headers: { 'content-length': String(1 << 20) } }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection });
        req.destroy();
      });
      req.on('error', reject);
      req.write('x'.repeat(10)); // 10 bytes of a promised MiB: a handler that read the body would never answer
    });
    expect(answer).toEqual({ status: 401, connection: 'close' });
    expect(handled).toEqual([]);
  });

  it('refuses CloudEvents on / the same way, and lets an accepted sender through with its name', async () => {
    const ce = { 'ce-id': 'e1', 'ce-source': '/t', 'ce-type': 't', 'ce-specversion': '1.0', 'content-type': 'application/json' };
    const refused = await fetch(`${host.url}/`, { method: 'POST', headers: ce, body: '{}' });
    const accepted = await fetch(`${host.url}/`, { method: 'POST', headers: { ...ce, authorization: 'Bearer friend' }, body: '{}' });
    const routed = await fetch(`${host.url}/in`, { method: 'POST', headers: { authorization: 'Bearer friend' }, body: 'abc' });
    expect([refused.status, accepted.status, routed.status]).toEqual([401, 204, 200]);
    expect(handled).toEqual(['friend event e1', 'friend 3']);
  });

  it('does not ask about health or metrics', async () => {
    const live = await fetch(`${host.url}/health/liveness`);
    const metrics = await fetch(`${host.url}/metrics`);
    expect([live.status, metrics.status, asked]).toEqual([200, 200, []]);
  });
});
