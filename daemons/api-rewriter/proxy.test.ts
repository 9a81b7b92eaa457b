/**
 * The proxy against a stand-in apiserver (a local HTTP server that records what it receives and answers
 * what each test scripts), for what a real apiserver cannot be made to do on demand: break a watch in
 * the middle of an event, answer with invalid JSON. The real-apiserver test is tests/integration/api-rewriter.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { rootLogger } from '../../shared/log/index.js';
import { waitFor } from '../../shared/testing/wait.js';
import { KUBEVIRT_RULES, Renamer } from './rules/index.js';
import { ApiRewriterMetrics } from './metrics.js';
import { createProxyHandler } from './proxy.js';
import { createUpgradeHandler } from './upgrade.js';
import { upstreamFromKubeConfig, type UpstreamTarget } from './upstream.js';

const INT = 'internal.virtualization.deckhouse.io';
type Script = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

let script: Script = (_req, _body, res) => res.end();
const seen: { method: string; url: string; body: string; headers: http.IncomingHttpHeaders }[] = [];
let fakeApiserver: http.Server;
let proxy: http.Server;
let proxyUrl: string;
let apiPort: number;
let upstream: UpstreamTarget;
const metrics = new ApiRewriterMetrics();

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function kubeConfigFor(port: number): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'proxy-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

beforeAll(async () => {
  fakeApiserver = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      script(req, body, res);
    });
  });
  fakeApiserver.on('upgrade', (req: http.IncomingMessage, socket: net.Socket) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', body: '', headers: req.headers });
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: SPDY/3.1\r\nConnection: Upgrade\r\n\r\n');
    socket.pipe(socket);
  });
  apiPort = await listen(fakeApiserver);
  upstream = await upstreamFromKubeConfig(kubeConfigFor(apiPort));
  proxy = http.createServer(
    createProxyHandler({ renamer: new Renamer(KUBEVIRT_RULES), upstream, metrics, log: rootLogger, maxRequestBodyBytes: 4096, maxResponseBodyBytes: 1 << 20 }),
  );
  proxy.on('upgrade', createUpgradeHandler(new Renamer(KUBEVIRT_RULES), upstream, rootLogger));
  proxyUrl = `http://127.0.0.1:${await listen(proxy)}`;
});

afterEach(() => {
  seen.length = 0;
});

afterAll(async () => {
  upstream.close();
  proxy.closeAllConnections();
  fakeApiserver.closeAllConnections();
  await Promise.all([new Promise((r) => proxy.close(r)), new Promise((r) => fakeApiserver.close(r))]);
});

const json = (res: http.ServerResponse, code: number, doc: unknown): void => {
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
};

const get = (url: string): Promise<http.IncomingMessage> => new Promise((resolve, reject) => http.get(url, resolve).on('error', reject));

/** How a response ended: 'end' (complete) or cut ('aborted'/'error'). */
const endOf = (res: http.IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    res.on('end', () => resolve('end'));
    res.on('error', () => resolve('error'));
    res.on('aborted', () => resolve('aborted'));
  });

/** The value of the proxy's one series of `name` whose labels include `labels` (0 when there is none). */
async function series(name: string, labels: string): Promise<number> {
  const line = (await metrics.registry.expose()).split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return Number(line?.split(' ').at(-1) ?? 0);
}
const streamErrors = (): Promise<number> => series('d8_virtualization_api_rewriter_upstream_errors_total', 'stage="stream"');
/** Requests whose client left before the answer was complete (code 499), summed over every series. */
async function clientsLeft(): Promise<number> {
  const lines = (await metrics.registry.expose())
    .split('\n')
    .filter((l) => l.startsWith('d8_virtualization_api_rewriter_requests_total{') && l.includes('code="499"'));
  return lines.reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
}

describe('kube-api-rewriter proxy', () => {
  it('renames the path and body on the way in, restores the answer, and uses its own credentials', async () => {
    script = (_req, body, res) => json(res, 201, { ...(JSON.parse(body) as object), metadata: { name: 'vm1', uid: 'u' } });
    const res = await fetch(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer client-token', accept: 'application/vnd.kubernetes.protobuf, application/json' },
      body: JSON.stringify({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm1' } }),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm1', uid: 'u' } });
    expect(seen[0]?.url).toBe(`/apis/${INT}/v1/namespaces/a/internalvirtualizationvirtualmachines`);
    expect(JSON.parse(seen[0]?.body ?? '')).toMatchObject({ apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachine' });
    expect(seen[0]?.headers.authorization).toBe('Bearer proxy-token');
    expect(seen[0]?.headers.accept).toBe('application/json');
  });

  it('refuses a malformed JSON body with 400 naming the problem, without calling the apiserver, and keeps serving', async () => {
    const bad = await fetch(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"apiVersion": kubevirt',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: expect.stringContaining('not valid JSON') });
    const badPatch = await fetch(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines/x`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json-patch+json' },
      body: '{"op":"add"}',
    });
    expect(badPatch.status).toBe(400);
    expect(((await badPatch.json()) as { message: string }).message).toMatch(/JSON Patch must be an array/);
    expect(seen).toHaveLength(0);
    script = (_req, _body, res) => json(res, 200, { kind: 'Status', status: 'Success' });
    expect((await fetch(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines/x`)).status).toBe(200);
  });

  it('refuses protobuf bodies with 415 and bodies over the limit with 413', async () => {
    const proto = await fetch(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
      body: 'k8s\0',
    });
    expect(proto.status).toBe(415);
    const huge = await fetch(`${proxyUrl}/api/v1/namespaces/a/configmaps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: { x: 'y'.repeat(10_000) } }),
    });
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as { message: string }).message).toContain('larger than 4096 bytes');
    expect(seen).toHaveLength(0);
    expect(await metrics.registry.expose()).toMatch(/rewrite_errors_total\{side="request",reason="too_large"\} 1/);
  });

  it('passes unrelated requests and their bytes through untouched', async () => {
    const raw = '{"kind":"Lease",  "spec":{"holderIdentity":"kubevirt.io/odd"}}';
    script = (_req, _body, res) => res.writeHead(200, { 'content-type': 'application/json', 'x-extra': '1' }).end(raw);
    const res = await fetch(`${proxyUrl}/apis/coordination.k8s.io/v1/namespaces/a/leases/l?x=1`, {
      headers: { accept: 'application/vnd.kubernetes.protobuf' },
    });
    expect(await res.text()).toBe(raw);
    expect(res.headers.get('x-extra')).toBe('1');
    expect(seen[0]?.url).toBe('/apis/coordination.k8s.io/v1/namespaces/a/leases/l?x=1');
    expect(seen[0]?.headers.accept).toBe('application/vnd.kubernetes.protobuf');
  });

  it('passes header fields on (repeated ones too) without hop-by-hop ones, the client credentials or its host', async () => {
    script = (_req, _body, res) => {
      res.setHeader('x-seen', ['a', 'b']);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 16, 'keep-alive': 'timeout=5' }).end('{"kind":"Lease"}');
    };
    // A raw request: fetch would join repeated fields and refuses hop-by-hop ones.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(proxyUrl).port), '127.0.0.1', () =>
        socket.write(
          'GET /apis/coordination.k8s.io/v1/namespaces/a/leases/l HTTP/1.1\r\nHost: proxy.example\r\nX-Trace: 1\r\nx-trace: 2\r\n' +
            'Authorization: Bearer client-token\r\nProxy-Authorization: Basic eA==\r\nTE: trailers\r\nKeep-Alive: timeout=1\r\nConnection: close\r\n\r\n',
        ),
      );
      let text = '';
      socket.setEncoding('latin1').on('data', (c: string) => (text += c));
      socket.on('end', () => resolve(text)).on('error', reject);
    });
    const h = seen[0]?.headers ?? {};
    expect(h['x-trace']).toBe('1, 2');
    expect(h.host).toBe(`127.0.0.1:${apiPort}`);
    expect(h.authorization).toBe('Bearer proxy-token');
    expect([h['proxy-authorization'], h.te, h['keep-alive']]).toEqual([undefined, undefined, undefined]);
    const [head = '', body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    // Repeated fields may come joined (RFC 9110 5.3): the values, in order, are what counts.
    expect((head.match(/^x-seen: .*$/gim) ?? []).map((l) => l.slice('x-seen: '.length)).join(', ')).toBe('a, b');
    expect(head).toMatch(/^content-length: 16$/im);
    expect(head).not.toMatch(/^keep-alive:/im);
    expect(body).toBe('{"kind":"Lease"}');
  });

  it('answers a compressed answer of a renamed kind restored and uncompressed, and passes other encodings on', async () => {
    const doc = { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachine', metadata: { name: 'x' } };
    script = (req, _body, res) => {
      const gzip = req.url?.endsWith('/gz') === true;
      const body = gzip ? gzipSync(JSON.stringify(doc)) : Buffer.from('opaque');
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': gzip ? 'gzip' : 'br', 'content-length': body.length }).end(body);
    };
    const gz = await get(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines/gz`);
    let text = '';
    for await (const c of gz) text += String(c);
    expect([gz.headers['content-encoding'], Number(gz.headers['content-length'])]).toEqual([undefined, Buffer.byteLength(text)]);
    expect(JSON.parse(text)).toEqual({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'x' } });
    const br = await get(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines/br`);
    let raw = '';
    for await (const c of br) raw += String(c);
    expect([br.headers['content-encoding'], br.headers['content-length'], raw]).toEqual(['br', '6', 'opaque']);
  });

  it('passes a response that is not JSON on a rewritten path as it is and counts it', async () => {
    script = (_req, _body, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"truncated":');
    const invalid = (): Promise<number> => series('d8_virtualization_api_rewriter_rewrite_errors_total', 'side="response",reason="invalid_json"');
    const before = await invalid();
    const res = await fetch(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines/x`);
    expect(await res.text()).toBe('{"truncated":');
    expect(await invalid()).toBe(before + 1);
  });

  it('streams watch events restored as they come, and ends the stream cleanly when the apiserver breaks mid-event', async () => {
    let release: () => void = () => undefined;
    const go = new Promise<void>((resolve) => (release = resolve));
    script = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(
        JSON.stringify({ type: 'ADDED', object: { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachine', metadata: { name: 'a' } } }) + '\n',
      );
      void go.then(() => {
        res.write('{"type":"MODIFIED","object":{"apiVersion":"internal.virtua');
        setImmediate(() => res.socket?.destroy());
      });
    };
    const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(`${proxyUrl}/apis/kubevirt.io/v1/virtualmachines?watch=true`, resolve).on('error', reject),
    );
    expect(res.statusCode).toBe(200);
    const received: string[] = [];
    let first: () => void = () => undefined;
    const gotFirst = new Promise<void>((resolve) => (first = resolve));
    res.setEncoding('utf8').on('data', (c: string) => {
      received.push(c);
      first();
    });
    // The first event arrives before the apiserver sends anything more: nothing is buffered.
    await gotFirst;
    expect(JSON.parse(received.join(''))).toEqual({ type: 'ADDED', object: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'a' } } });
    const ended = new Promise<string>((resolve) => {
      res.on('end', () => resolve('end'));
      res.on('error', () => resolve('error'));
      res.on('aborted', () => resolve('aborted'));
    });
    release();
    expect(await ended).toBe('end');
    expect(received.join('').trimEnd().split('\n')).toHaveLength(1);
    expect(await metrics.registry.expose()).toMatch(/rewrite_errors_total\{side="response",reason="truncated_watch_event"\} 1/);
  });

  it('counts a watch the apiserver cuts as an apiserver failure, and one its client closes not', async () => {
    const event = (name: string): string =>
      JSON.stringify({ type: 'ADDED', object: { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachine', metadata: { name } } }) + '\n';
    const watchOnce = (): Promise<http.IncomingMessage> =>
      new Promise<http.IncomingMessage>((resolve, reject) =>
        http.get(`${proxyUrl}/apis/kubevirt.io/v1/virtualmachines?watch=true`, { agent: false }, resolve).on('error', reject),
      );
    const before = await streamErrors();
    // The apiserver cuts the watch after a whole event (its connection dies): counted once.
    script = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(event('cut'), () => setImmediate(() => res.socket?.destroy()));
    };
    const cut = await watchOnce();
    cut.resume();
    await waitFor('the cut watch counted', async () => (await streamErrors()) === before + 1);
    // The client closes the next one: the apiserver sees it closed, and nothing more is counted.
    let upstreamClosed = false;
    script = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(event('w'));
      res.on('close', () => (upstreamClosed = true));
    };
    const res = await watchOnce();
    await new Promise((resolve) => res.once('data', resolve));
    res.destroy();
    await waitFor('the apiserver to see the watch closed', () => upstreamClosed);
    expect(await streamErrors()).toBe(before + 1);
  });

  it('streams a list answer item by item as the apiserver sends it, chunked, larger than the response limit', async () => {
    const vm = (i: number): string =>
      JSON.stringify({
        apiVersion: `${INT}/v1`,
        kind: 'InternalVirtualizationVirtualMachine',
        metadata: { name: `vm-${i}`, labels: { [`kubevirt.${INT}/vm`]: 'x' } },
      });
    let release: () => void = () => undefined;
    const go = new Promise<void>((resolve) => (release = resolve));
    const many = Array.from({ length: 12000 }, (_, i) => vm(i + 1)).join(',');
    script = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"apiVersion":"${INT}/v1","items":[${vm(0)},`);
      void go.then(() => res.end(`${many}],"kind":"InternalVirtualizationVirtualMachineList","metadata":{"resourceVersion":"7"}}`));
    };
    const res = await get(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines`);
    expect([res.statusCode, res.headers['content-length'], res.headers['transfer-encoding']]).toEqual([200, undefined, 'chunked']);
    const received: string[] = [];
    res.setEncoding('utf8').on('data', (c: string) => received.push(c));
    // The first item is restored and sent before the apiserver sends the rest.
    await waitFor('the first item', () => received.join('').includes('"vm-0"'));
    expect(received.join('')).toBe(
      '{"items":[{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"vm-0","labels":{"kubevirt.io/vm":"x"}}}',
    );
    release();
    expect(await endOf(res)).toBe('end');
    const doc = JSON.parse(received.join('')) as { apiVersion: string; kind: string; metadata: unknown; items: { kind: string; metadata: { name: string } }[] };
    expect(received.join('').length).toBeGreaterThan(1 << 20);
    expect([doc.apiVersion, doc.kind, doc.metadata, doc.items.length, doc.items[12000]?.kind, doc.items[12000]?.metadata.name]).toEqual([
      'kubevirt.io/v1',
      'VirtualMachineList',
      { resourceVersion: '7' },
      12001,
      'VirtualMachine',
      'vm-12000',
    ]);
  });

  it('cuts the list answer (never a finished corrupt document) when the apiserver dies or sends garbage mid-list, and keeps serving', async () => {
    const start = `{"apiVersion":"${INT}/v1","items":[{"kind":"InternalVirtualizationVirtualMachine","apiVersion":"${INT}/v1","metadata":{"name":"a"}},`;
    const invalidJson = async (): Promise<number> =>
      Number(/rewrite_errors_total\{side="response",reason="invalid_json"\} (\d+)/.exec(await metrics.registry.expose())?.[1] ?? 0);
    const before = [await streamErrors(), await invalidJson()];
    const endings: ((res: http.ServerResponse) => void)[] = [
      (res) => {
        res.write(`${start}{"kind":"Inte`);
        setImmediate(() => res.socket?.destroy());
      },
      (res) => res.end(`${start}{"kind":"Inte`),
      (res) => res.end(`${start}{"kind": garbage}],"kind":"InternalVirtualizationVirtualMachineList"}`),
      (res) => res.end(`${start}{}],"kind":"InternalVirtualizationVirtualMachineList"}trailing`),
    ];
    for (const ending of endings) {
      script = (_req, _body, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        ending(res);
      };
      // The cut may come before the headers left the proxy: the request fails then (socket hang up).
      const res = await get(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines`).catch((err: unknown) =>
        err instanceof Error ? err : new Error(String(err)),
      );
      if (res instanceof Error) {
        expect(res.message).toMatch(/socket hang up|ECONNRESET/);
        continue;
      }
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      const end = await endOf(res);
      if (res.statusCode === 502) {
        // Broken before the first byte went out: a Status naming the problem.
        expect(end).toBe('end');
        expect(JSON.parse(text)).toMatchObject({ kind: 'Status', code: 502, message: expect.stringContaining('list answer broke') });
      } else {
        expect(res.statusCode).toBe(200);
        expect(end).not.toBe('end');
        expect((): unknown => JSON.parse(text)).toThrow(SyntaxError);
      }
    }
    // One apiserver that died, three broken documents.
    expect([await streamErrors(), await invalidJson()]).toEqual([(before[0] ?? 0) + 1, (before[1] ?? 0) + 3]);
    script = (_req, _body, res) => json(res, 200, { kind: 'InternalVirtualizationVirtualMachineList', apiVersion: `${INT}/v1`, items: [], metadata: {} });
    const ok = await fetch(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines`);
    expect(await ok.json()).toEqual({ kind: 'VirtualMachineList', apiVersion: 'kubevirt.io/v1', items: [], metadata: {} });
  });

  it('passes a collection answer that is not a list (garbage, cut before its items, a Status) as it is', async () => {
    for (const raw of ['not json', '{"apiVersion":"x","ite', '[1,2]', '{"kind":"Status","code":410,"items":{"a":"kubevirt.io"}}']) {
      script = (_req, _body, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(raw);
      const res = await fetch(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines`);
      expect({ raw, status: res.status, text: await res.text() }).toEqual({ raw, status: 200, text: raw });
    }
  });

  it('tunnels an upgraded connection (exec, port-forward) byte for byte after renaming its path', async () => {
    const port = Number(new URL(proxyUrl).port);
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8').on('data', (c: string) => (received += c));
    socket.write(
      'GET /apis/kubevirt.io/v1/namespaces/a/virtualmachineinstances/v/portforward HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n',
    );
    await waitFor('the upgrade answer', () => received.includes('\r\n\r\n'));
    expect(received).toMatch(/^HTTP\/1\.1 101 /);
    socket.write('ping');
    await waitFor('the echo through the tunnel', () => received.endsWith('ping'));
    socket.destroy();
    expect(seen[0]?.url).toBe(`/apis/${INT}/v1/namespaces/a/internalvirtualizationvirtualmachineinstances/v/portforward`);
    expect(seen[0]?.headers.authorization).toBe('Bearer proxy-token');
  });

  it('reuses one pooled connection to the apiserver and sends a restored document with its byte length (non-ASCII text), framed by length or chunked', async () => {
    let connections = 0;
    const count = (): void => {
      connections++;
    };
    fakeApiserver.on('connection', count);
    try {
      const stored = { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachine', metadata: { name: 'v', annotations: { note: 'ünïcødé ✓' } } };
      let answers = 0;
      script = (_req, _body, res) => {
        if (answers++ % 2 === 0) return json(res, 200, stored);
        // Framed by Content-Length and sent in two pieces: the body is complete with the second.
        const bytes = Buffer.from(JSON.stringify(stored));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
        res.write(bytes.subarray(0, 10));
        setImmediate(() => res.end(bytes.subarray(10)));
      };
      for (let i = 0; i < 6; i++) {
        const res = await get(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines/v`);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        expect(await endOf(res)).toBe('end');
        const body = Buffer.concat(chunks);
        expect(Number(res.headers['content-length'])).toBe(body.length);
        expect(JSON.parse(body.toString('utf8'))).toEqual({ ...stored, apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine' });
      }
      expect(seen).toHaveLength(6);
      // The pool may still hold a connection from an earlier test: at most one new one for six requests.
      expect(connections).toBeLessThanOrEqual(1);
    } finally {
      fakeApiserver.off('connection', count);
    }
  });

  it('cuts the answer to one object when the apiserver dies before its Content-Length is in, counts it, and keeps serving', async () => {
    const before = await streamErrors();
    script = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 });
      res.write('{"apiVersion":"');
      setImmediate(() => res.destroy());
    };
    const cut = await new Promise<string>((resolve) => {
      http
        .get(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines/v`, (res) => {
          res.resume();
          void endOf(res).then(resolve);
        })
        .on('error', () => resolve('error'));
    });
    expect(cut).not.toBe('end');
    await waitFor('the cut answer counted', async () => (await streamErrors()) === before + 1);
    script = (_req, _body, res) => json(res, 200, { kind: 'Status', status: 'Success' });
    expect((await fetch(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines/v`)).status).toBe(200);
  });

  it('answers 503 with a Status when the apiserver is unreachable', async () => {
    const downKc = kubeConfigFor(1);
    const down = await upstreamFromKubeConfig(downKc);
    const server = http.createServer(
      createProxyHandler({
        renamer: new Renamer(KUBEVIRT_RULES),
        upstream: down,
        metrics: new ApiRewriterMetrics(),
        log: rootLogger,
        maxRequestBodyBytes: 4096,
        maxResponseBodyBytes: 4096,
      }),
    );
    const port = await listen(server);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/apis/kubevirt.io/v1/virtualmachines`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { message: string }).message).toMatch(/apiserver behind the proxy is unreachable/);
    } finally {
      down.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

/**
 * Bytes the kernel holds on the established loopback TCP connections to or from these ports: each
 * end's send queue (written, not yet taken by the peer) and receive queue (arrived, not yet read by
 * its process), /proc/net/tcp `tx_queue:rx_queue`.
 */
function kernelQueued(ports: readonly number[]): number {
  const ends = new Set(ports.map((p) => `0100007F:${p.toString(16).toUpperCase().padStart(4, '0')}`));
  let bytes = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, remote, state, queues] = line.trim().split(/\s+/);
    if (state !== '01' || queues === undefined || !(ends.has(local ?? '') || ends.has(remote ?? ''))) continue;
    const [tx, rx] = queues.split(':');
    bytes += parseInt(tx ?? '0', 16) + parseInt(rx ?? '0', 16);
  }
  return bytes;
}

/**
 * The most the kernel can hold on two loopback connections (apiserver to proxy, proxy to client): on
 * each, the sender's send buffer and the receiver's receive buffer at their autotuning maximum
 * (tcp_wmem, tcp_rmem; 4 MiB and 32 MiB on the development machine).
 */
function kernelCeiling(): number {
  const max = (name: string): number => Number(readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim().split(/\s+/)[2]);
  return 2 * (max('tcp_wmem') + max('tcp_rmem'));
}

/** What a stand-in apiserver serving a big list managed to write, and how. */
interface BigList {
  /** Bytes handed to the response so far. */
  written: number;
  /** The last write returned false and 'drain' has not come yet. */
  waitingForDrain: boolean;
  ended: boolean;
  /** The connection closed before the list ended. */
  closed: boolean;
}

/** Item i of the big list, stored names, about 4 KB (mostly one annotation: cheap to parse). */
const bigItem = (i: number): string =>
  `{"apiVersion":"${INT}/v1","kind":"InternalVirtualizationVirtualMachine","metadata":{"name":"vm-${i}","namespace":"a",` +
  `"labels":{"kubevirt.${INT}/vm":"vm-${i}"},"annotations":{"note":"${'n'.repeat(4000)}"}},"spec":{"running":true}}`;

/**
 * Answer a list of `items` big items as the apiserver would (kind and metadata after the items),
 * generated lazily in pieces of about 64 KiB while the connection takes them: after a write that
 * returns false the next piece waits for 'drain', so the list never exists whole in this process.
 */
function serveBigList(res: http.ServerResponse, items: number): BigList {
  const state: BigList = { written: 0, waitingForDrain: false, ended: false, closed: false };
  res.on('close', () => (state.closed = !state.ended));
  res.writeHead(200, { 'content-type': 'application/json' });
  let next = 0;
  const pump = (): void => {
    state.waitingForDrain = false;
    while (!res.destroyed) {
      let piece = next === 0 ? `{"apiVersion":"${INT}/v1","items":[` : '';
      for (; piece.length < 64 * 1024 && next < items; next++) piece += (next === 0 ? '' : ',') + bigItem(next);
      state.written += Buffer.byteLength(piece);
      if (next === items) {
        const tail = '],"kind":"InternalVirtualizationVirtualMachineList","metadata":{"resourceVersion":"9"}}';
        state.written += tail.length;
        state.ended = true;
        res.end(piece + tail);
        return;
      }
      if (!res.write(piece)) {
        state.waitingForDrain = true;
        res.once('drain', pump);
        return;
      }
    }
  };
  pump();
  return state;
}

describe('kube-api-rewriter proxy: a streamed list under backpressure', () => {
  // The list is larger than all the kernel's buffers on both connections can hold, by at least 32 MiB,
  // and at least 64 MiB: if the proxy read on while its client does not, the apiserver writes it all.
  const ceiling = kernelCeiling();
  const items = Math.ceil(Math.max(64 << 20, ceiling + (32 << 20)) / bigItem(99_999).length);
  /** What node itself may hold on the way: a few 64 KiB reads and 16 KiB stream buffers, one item. */
  const NODE_SLACK = 1 << 20;

  /** A GET of the big list through the proxy, read up to its first bytes and then not read. */
  async function stalledList(): Promise<{ up: BigList; res: http.IncomingMessage; chunks: Buffer[]; received: () => number; read: () => void }> {
    let up: BigList | undefined;
    script = (_req, _body, res) => (up = serveBigList(res, items));
    const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines`, { agent: false }, resolve).on('error', reject),
    );
    expect(res.statusCode).toBe(200);
    const chunks: Buffer[] = [];
    let received = 0;
    let reading = false;
    res.on('data', (c: Buffer) => {
      chunks.push(c);
      received += c.length;
      if (!reading) res.pause();
    });
    // Stalled: the apiserver waits for 'drain' and neither its count nor the kernel's queues move
    // over five probes in a row. (Taken early on a busy machine, the bound below still holds: it
    // holds at every moment; only the stall itself would be weaker evidence.)
    const port = Number(new URL(proxyUrl).port);
    let last = '';
    let steady = 0;
    await waitFor(
      'the apiserver stalled on a client that does not read',
      () => {
        if (up === undefined) return false;
        if (up.ended || up.closed) return true;
        const now = `${up.written}/${kernelQueued([apiPort, port])}`;
        steady = up.waitingForDrain && now === last ? steady + 1 : 0;
        last = now;
        return steady >= 5;
      },
      { intervalMs: 100 },
    );
    const stalled = up as unknown as BigList;
    return {
      up: stalled,
      res,
      chunks,
      received: () => received,
      read: () => {
        reading = true;
        res.resume();
      },
    };
  }

  it('stops reading the apiserver while its client does not read (kernel buffers and one piece in flight), then delivers the whole list restored', async () => {
    const { up, res, chunks, received, read } = await stalledList();
    const port = Number(new URL(proxyUrl).port);
    // One snapshot (stalled: nothing moves): the kernel's queues on the apiserver's connection (its
    // bytes) and on the client's (restored bytes, chunked).
    const at = { written: up.written, upstreamQueued: kernelQueued([apiPort]), clientQueued: kernelQueued([port]), received: received() };
    // Not the whole list: the apiserver's writes wait for the proxy, which waits for its client; what
    // it wrote is bounded by the kernel's buffers, far below the list.
    expect({ ended: up.ended, closed: up.closed, waitingForDrain: up.waitingForDrain }).toEqual({ ended: false, closed: false, waitingForDrain: true });
    expect(at.upstreamQueued + at.clientQueued).toBeLessThanOrEqual(ceiling);
    expect(at.written).toBeLessThan(ceiling + NODE_SLACK);

    read();
    let how: string | undefined;
    void endOf(res).then((h) => (how = h));
    await waitFor('the rest of the list once the client reads again', () => how);
    expect(how).toBe('end');
    expect([up.ended, up.closed]).toEqual([true, false]);
    // And what was written but not received sat in the kernel's socket buffers, not in the processes
    // (the apiserver stand-in's, the proxy's and the client's node streams): they held at most
    // NODE_SLACK of it. The client's side is in restored bytes, converted at the whole list's ratio.
    const restoredPerByte = chunks.reduce((n, c) => n + c.length, 0) / up.written;
    const heldInProcesses = at.written - at.upstreamQueued - (at.clientQueued + at.received) / restoredPerByte;
    expect(heldInProcesses).toBeLessThanOrEqual(NODE_SLACK);
    const doc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      apiVersion: string;
      kind: string;
      metadata: unknown;
      items: { apiVersion: string; kind: string; metadata: { name: string; labels: Record<string, string>; annotations: { note: string } } }[];
    };
    expect([doc.apiVersion, doc.kind, doc.metadata, doc.items.length]).toEqual(['kubevirt.io/v1', 'VirtualMachineList', { resourceVersion: '9' }, items]);
    const wrong = doc.items.findIndex(
      (item, i) =>
        item.apiVersion !== 'kubevirt.io/v1' ||
        item.kind !== 'VirtualMachine' ||
        item.metadata.name !== `vm-${i}` ||
        item.metadata.labels['kubevirt.io/vm'] !== `vm-${i}` ||
        item.metadata.annotations.note.length !== 4000,
    );
    expect(wrong).toBe(-1);
  });

  it('closes the apiserver request when the client leaves in the middle of a stalled list, and keeps serving', async () => {
    const { up, res } = await stalledList();
    expect([up.ended, up.waitingForDrain]).toEqual([false, true]);
    const [errorsBefore, leftBefore] = [await streamErrors(), await clientsLeft()];
    res.destroy();
    await waitFor('the apiserver to see its connection closed', () => up.closed);
    expect(up.ended).toBe(false);
    // Counted as the client leaving (499), not as an apiserver failure.
    await waitFor('the request counted', async () => (await clientsLeft()) === leftBefore + 1);
    expect(await streamErrors()).toBe(errorsBefore);
    script = (_req, _body, r) =>
      json(r, 200, {
        apiVersion: `${INT}/v1`,
        kind: 'InternalVirtualizationVirtualMachineList',
        items: [{ apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachine' }],
        metadata: {},
      });
    const next = await fetch(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines`);
    expect(await next.json()).toEqual({
      items: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine' }],
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineList',
      metadata: {},
    });
  });
});
