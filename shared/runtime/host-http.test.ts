import { deflateSync, gzipSync } from 'node:zlib';
import { Agent, request as httpRequest } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ListenError } from '../http/listen.js';
import { waitFor } from '../testing/wait.js';
import { binaryHeaders, send, startProbe, type ProbeState } from './testing/index.js';
import type { ServerHandle } from './server.js';

describe('function host: routes, health and metrics over real HTTP', () => {
  let host: ServerHandle;
  let state: ProbeState;
  beforeEach(async () => {
    // METRICS_AUTH none: the metrics test reads /metrics without a token (the guard is tested in
    // shared/authz and tests/integration/metrics-auth).
    ({ host, state } = await startProbe({ METRICS_AUTH: 'none' }));
  });
  afterEach(async () => {
    await host.close();
  });

  it('serves a plain route with path parameters and a JSON body', async () => {
    const res = await send(`${host.url}/objects/vm-1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'VirtualMachine' }),
    });
    expect([res.status, res.json()]).toEqual([201, { name: 'vm-1', got: { kind: 'VirtualMachine' } }]);
  });

  it('rejects a route body that is not JSON with 400 naming the problem', async () => {
    const res = await send(`${host.url}/objects/vm-1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'nope' });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({
      error: { code: 'BAD_REQUEST', message: expect.stringMatching(/^request body \(application\/json\) is not valid JSON/) },
    });
  });

  it('sends strings as text with the route headers, and no body as 204', async () => {
    const text = await send(`${host.url}/text`);
    const empty = await send(`${host.url}/empty`);
    expect([text.status, text.body, text.headers['x-probe'], text.headers['content-type']]).toEqual([200, 'plain text', 'yes', 'text/plain; charset=utf-8']);
    expect([empty.status, empty.body]).toEqual([204, '']);
  });

  it('applies a route body limit smaller than the host one', async () => {
    const res = await send(`${host.url}/small`, { method: 'POST', body: 'x'.repeat(17) });
    expect([res.status, (res.json() as { error: { message: string } }).error.message]).toEqual([413, 'request body is larger than the limit of 16 bytes']);
  });

  it('reads gzip and deflate bodies, and applies the limit to the decoded size', async () => {
    const json = { headers: { 'content-type': 'application/json' } };
    const gzipped = await send(`${host.url}/objects/vm-1`, {
      method: 'POST',
      ...json,
      headers: { ...json.headers, 'content-encoding': 'gzip' },
      body: gzipSync('{"a":1}'),
    });
    const deflated = await send(`${host.url}/objects/vm-2`, {
      method: 'POST',
      headers: { ...json.headers, 'content-encoding': 'deflate' },
      body: deflateSync('[2]'),
    });
    // 2 KiB of JSON compresses to a few dozen bytes: the limit counts what it inflates to.
    const bomb = await send(`${host.url}/objects/vm-3`, {
      method: 'POST',
      headers: { ...json.headers, 'content-encoding': 'gzip' },
      body: gzipSync(`"${'x'.repeat(2048)}"`),
    });
    expect([gzipped.status, gzipped.json(), deflated.status, deflated.json()]).toEqual([201, { name: 'vm-1', got: { a: 1 } }, 201, { name: 'vm-2', got: [2] }]);
    expect([bomb.status, bomb.json()]).toEqual([413, { error: { code: 'PAYLOAD_TOO_LARGE', message: 'request body is larger than the limit of 1024 bytes' } }]);
  });

  it('rejects an unknown content encoding and a truncated gzip body with 400, and keeps serving', async () => {
    const compress = await send(`${host.url}/objects/vm-1`, { method: 'POST', headers: { 'content-encoding': 'compress' }, body: 'abc' });
    const cut = await send(`${host.url}/objects/vm-1`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body: gzipSync('{"a":1}').subarray(0, 12) });
    const bogus = await send(`${host.url}/objects/vm-1`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body: 'not gzip at all' });
    expect([compress.status, compress.json()]).toEqual([
      400,
      { error: { code: 'BAD_REQUEST', message: 'request body could not be read: unsupported content encoding "compress"' } },
    ]);
    expect([cut.status, bogus.status]).toEqual([400, 400]);
    expect((await send(`${host.url}/text`)).status).toBe(200);
  });

  it('matches routes as express 5 does: any case, a trailing slash, decoded parameters, HEAD by the GET route', async () => {
    const loose = await send(`${host.url}/OBJECTS/vm%2D1/`, { method: 'POST', body: '{}' });
    const head = await send(`${host.url}/text`, { method: 'HEAD' });
    const malformed = await send(`${host.url}/objects/%E0%A4%A`, { method: 'POST', body: '{}' });
    expect([loose.status, loose.json()]).toEqual([201, { name: 'vm-1', got: {} }]);
    expect([head.status, head.body, head.headers['x-probe']]).toEqual([200, '', 'yes']);
    expect([malformed.status, (malformed.json() as { error: { message: string } }).error.message]).toEqual([400, "Failed to decode param '%E0%A4%A'"]);
  });

  it('answers an unknown path with a JSON 404', async () => {
    const res = await send(`${host.url}/nowhere`);
    expect([res.status, res.json()]).toEqual([404, { error: { code: 'NOT_FOUND', message: 'no route for GET /nowhere' } }]);
  });

  it('reports liveness, and readiness as the readiness hook decides', async () => {
    const live = await send(`${host.url}/health/liveness`);
    const ready = await send(`${host.url}/health/readiness`);
    state.ready = false;
    const notReady = await send(`${host.url}/health/readiness`);
    expect([live.status, ready.status, notReady.status]).toEqual([200, 200, 503]);
    expect(notReady.json()).toEqual({ status: 'not ready', reason: 'the readiness hook said no' });
  });

  it('exposes request counts and latency by route, method and status in the Prometheus format', async () => {
    for (const id of ['a', 'b']) {
      await send(host.url, { method: 'POST', headers: binaryHeaders({ id, type: 'probe.echo' }), body: '{}' });
    }
    await send(host.url, { method: 'POST', headers: { 'content-type': 'text/plain' } });
    await send(`${host.url}/nowhere/x`);
    const res = await send(`${host.url}/metrics`);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.body).toContain('http_requests_total{route="/",method="POST",status="200"} 2\n');
    expect(res.body).toContain('http_requests_total{route="/",method="POST",status="400"} 1\n');
    expect(res.body).toContain('http_requests_total{route="unmatched",method="GET",status="404"} 1\n');
    expect(res.body).toContain('http_request_duration_seconds_count{route="/",method="POST",status="200"} 2\n');
    expect(res.body).toMatch(/http_request_duration_seconds_bucket\{le="\+Inf",route="\/",method="POST",status="200"\} 2\n/);
    expect(res.body).toContain('http_requests_in_flight 1\n');
  });
});

describe('function host: start', () => {
  it('fails with a ListenError naming the function, the address and the cause when the port is taken', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      const err = await startProbe({ PORT: String(port) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ListenError);
      expect(err).toHaveProperty('message', `function probe cannot listen on 127.0.0.1:${port}: address already in use`);
    } finally {
      holder.close();
    }
  });
});

describe('function host: close()', () => {
  it('lets an in-flight request finish, refuses new connections, then runs the shutdown hook once', async () => {
    const { host, state } = await startProbe();
    const held = send(host.url, { method: 'POST', headers: binaryHeaders({ id: 'held', type: 'probe.hold' }), body: '{}' });
    await waitForInFlight(host, state, 1);
    const closing = host.close();
    const refused = await send(`${host.url}/health/liveness`).then(
      () => 'answered',
      (err: NodeJS.ErrnoException) => err.code,
    );
    state.held.release(); // only now may the in-flight request answer, while the host is closing
    const finished = await held;
    const report = await closing;
    expect([refused, finished.status, finished.headers['ce-id'], finished.headers['connection']]).toEqual(['ECONNREFUSED', 200, 'held-reply', 'close']);
    expect([report, state.stopped, await host.close()]).toEqual([{ drained: true, hookCompleted: true, clean: true }, 1, report]);
  });

  it('cuts requests still running at the drain deadline and reports an unclean stop', async () => {
    const { host, state } = await startProbe({ DRAIN_TIMEOUT_MS: '100' });
    // Never released: the request can only end by being cut.
    const stuck = send(host.url, { method: 'POST', headers: binaryHeaders({ id: 'stuck', type: 'probe.hold' }), body: '{}' }).catch(
      (err: NodeJS.ErrnoException) => err.code,
    );
    await waitForInFlight(host, state, 1);
    const report = await host.close();
    expect([report, state.stopped, await stuck]).toEqual([{ drained: false, hookCompleted: true, clean: false }, 1, 'ECONNRESET']);
    state.held.release();
  });
});

/** The request is held in the function and counted by the in-flight gauge (read from the registry, not over HTTP). */
async function waitForInFlight(host: ServerHandle, state: ProbeState, count: number): Promise<void> {
  await waitFor(
    `${count} held request(s) in flight`,
    async () => state.held.count === count && (await host.metrics.expose()).includes(`http_requests_in_flight ${count}\n`),
  );
}

describe('function host: idle keep-alive connections', () => {
  /** One keep-alive GET of /empty; its answer's Keep-Alive header and the socket it came on. */
  const keepAliveGet = (url: string): Promise<{ keepAlive: string | undefined; socket: Socket }> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(`${url}/empty`, { agent: new Agent({ keepAlive: true }) }, (res) => {
        res.resume();
        res.on('end', () => resolve({ keepAlive: res.headers['keep-alive']?.toString(), socket: req.socket as Socket }));
      });
      req.on('error', reject);
      req.end();
    });

  it("stays open longer than Go clients' 90 s idle timeout by default, so the client closes first", async () => {
    const { host } = await startProbe({ METRICS_AUTH: 'none' });
    try {
      const { keepAlive, socket } = await keepAliveGet(host.url);
      expect(keepAlive).toBe('timeout=120');
      socket.destroy();
    } finally {
      await host.close();
    }
  });

  it('closes an idle connection after KEEP_ALIVE_TIMEOUT_MS', async () => {
    const { host } = await startProbe({ METRICS_AUTH: 'none', KEEP_ALIVE_TIMEOUT_MS: '200' });
    try {
      const { socket } = await keepAliveGet(host.url);
      let closed = false;
      socket.once('close', () => (closed = true));
      await waitFor('the host to close the idle connection', () => closed);
    } finally {
      await host.close();
    }
  });
});
