/**
 * The proxy against a stand-in apiserver (a local HTTP server that records what it receives and answers
 * what each test scripts), for what a real apiserver cannot be made to do on demand: break a watch in
 * the middle of an event, answer with invalid JSON. The real-apiserver test is tests/integration/api-rewriter.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { rootLogger } from '../../shared/log/index.js';
import { waitFor } from '../../shared/testing/wait.js';
import { KUBEVIRT_RULES, Renamer } from '../../shared/rewriter/index.js';
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
  const apiPort = await listen(fakeApiserver);
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

  it('passes a response that is not JSON on a rewritten path as it is and counts it', async () => {
    script = (_req, _body, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"truncated":');
    const res = await fetch(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines/x`);
    expect(await res.text()).toBe('{"truncated":');
    expect(await metrics.registry.expose()).toMatch(/rewrite_errors_total\{side="response",reason="invalid_json"\} 1/);
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
    const streamErrors = async (): Promise<number> => Number(/upstream_errors_total\{stage="stream"\} (\d+)/.exec(await metrics.registry.expose())?.[1] ?? 0);
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

  it('reuses one pooled connection to the apiserver and sends a restored document with its byte length (non-ASCII text)', async () => {
    let connections = 0;
    const count = (): void => {
      connections++;
    };
    fakeApiserver.on('connection', count);
    try {
      const stored = { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachine', metadata: { name: 'v', annotations: { note: 'ünïcødé ✓' } } };
      script = (_req, _body, res) => json(res, 200, stored);
      for (let i = 0; i < 5; i++) {
        const res = await get(`${proxyUrl}/apis/kubevirt.io/v1/namespaces/a/virtualmachines/v`);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        expect(await endOf(res)).toBe('end');
        const body = Buffer.concat(chunks);
        expect(Number(res.headers['content-length'])).toBe(body.length);
        expect(JSON.parse(body.toString('utf8'))).toEqual({ ...stored, apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine' });
      }
      expect(seen).toHaveLength(5);
      // The pool may still hold a connection from an earlier test: at most one new one for five requests.
      expect(connections).toBeLessThanOrEqual(1);
    } finally {
      fakeApiserver.off('connection', count);
    }
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
