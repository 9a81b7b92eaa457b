/**
 * Pins what keeps the subresources APIService off Knative's queue-proxy (docs/adr/0023, "Subresources
 * API through queue-proxy: measured"). The real kube-apiserver's aggregator calls an APIService whose
 * Service targets queue-proxy's TLS port (8112) on revision "pods" (revision-pod.ts: Knative Serving's
 * own queue-proxy with our certificate), as ADR 0023 routes admission. Behind the first pod's
 * queue-proxy a recorder (wire-recorder.ts) tells what reached the user container; behind the second,
 * the install's subresources function over plain HTTP. Found:
 * - plain requests reach the container as HTTP/2 over cleartext (the aggregator negotiates h2 with
 *   queue-proxy, which forwards an HTTP/2 request as h2c), which our function host does not speak:
 *   the aggregator then marks the APIService unavailable;
 * - upgrades (SPDY/3.1, WebSocket) arrive as HTTP/1.1 and carry bytes both ways, and Knative counts
 *   an open stream as a concurrent request;
 * - the aggregator's client certificate ends at queue-proxy, the function's only proof that the
 *   caller is the aggregator: behind queue-proxy it refuses even the front-proxy certificate's holder.
 * Each `it` fails if the peers start behaving otherwise.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect as http2Connect } from 'node:http2';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, loadAll } from 'js-yaml';
import { waitFor } from '../../../shared/testing/wait.js';
import { getTestEnv, kubectl } from '../../env/index.js';
import { rawUpgrade } from '../../env/raw-upgrade.js';
import { NAMESPACE, startRevisionEnv, type RevisionEnv } from './revision-env.js';
import { QUEUE_TLS_PORT, scrapeStat, type RevisionPod } from './revision-pod.js';
import { GROUP_VERSION, type WireRecord } from './wire-recorder.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const API_SERVICE = 'v1alpha2.subresources.virtualization.deckhouse.io';
const VM_PATH = `/apis/${GROUP_VERSION}/namespaces/vms/virtualmachines/vm`;

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: Record<string, unknown>;
}

let env: RevisionEnv;
let recorder: RevisionPod;

const raw = (path: string): Promise<{ code: number; stdout: string; stderr: string }> => kubectl(['get', '--raw', path], { kubeconfigPath: env.apiserver.kubeconfigPath });

const availability = async (): Promise<{ status: string; message: string }> => {
  const out = await env.ok(['get', 'apiservice', API_SERVICE, '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status}|{.status.conditions[?(@.type=="Available")].message}']);
  const [status = '', message = ''] = out.split('|');
  return { status, message };
};

beforeAll(async () => {
  // As knative/functions/subresources.yaml: no concurrency cap, streams up to 600 s.
  env = await startRevisionEnv('knsub', 'subresources-api', { service: 'subresources', containerConcurrency: 0, timeoutSeconds: 600 });
  const { ok } = env;
  await ok(['create', 'namespace', NAMESPACE]);
  // The candidate: the install's subresources-api Service with queue-proxy's TLS port as its target
  // (no selector: this test writes the endpoints).
  const installed = (loadAll(readFileSync(join(REPO, 'knative/functions/subresources.yaml'), 'utf8')) as Manifest[]).find((m) => m.kind === 'Service' && m.metadata.name === 'subresources-api');
  if (installed === undefined) throw new Error('knative/functions/subresources.yaml has no Service subresources-api');
  await ok(['apply', '-f', '-'], JSON.stringify({ ...installed, spec: { type: 'ClusterIP', ports: [{ name: 'https', port: 443, targetPort: QUEUE_TLS_PORT }] } }));
  recorder = await env.startPod(0, { userContainer: ['tests/integration/knative/wire-recorder.ts'] });
  await env.setEndpoints('subresources-api', [recorder]);
  const apiService = load(readFileSync(join(REPO, 'knative/apiservice/subresources.yaml'), 'utf8')) as Manifest;
  await ok(['apply', '-f', '-'], JSON.stringify({ ...apiService, spec: { ...apiService.spec, caBundle: env.ca.toString('base64') } }));
  await waitFor('the APIService Available through the recorder’s queue-proxy', async () => ((await availability()).status === 'True' ? true : undefined), {
    timeoutMs: 90_000,
    intervalMs: 500,
    abortIf: () => recorder.exited(),
  });
}, 600_000);

afterAll(async () => {
  await env?.stop();
}, 60_000);

describe('the subresources APIService through Knative Serving’s queue-proxy', () => {
  it('delivers the aggregator’s plain requests to the container as HTTP/2 over cleartext, the user in X-Remote-* headers and no trace of its client certificate, and Knative counts them', async () => {
    const r = await raw(VM_PATH);
    expect(r.stderr).toBe('');
    const seen = JSON.parse(r.stdout) as WireRecord;
    expect(seen).toMatchObject({ kind: 'WireRecord', httpVersion: '2.0', method: 'GET', path: VM_PATH });
    expect(seen.headers['x-remote-user']).toEqual(expect.any(String));
    expect(Object.keys(seen.headers).filter((h) => /cert|ssl|tls/i.test(h))).toEqual([]);
    await waitFor(
      'the aggregator’s requests in the queue-proxy stats',
      async () => {
        await Promise.all(Array.from({ length: 4 }, () => raw(VM_PATH)));
        return (await scrapeStat(recorder)).requestCount >= 1 ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  });

  for (const [name, method, sub, lines] of [
    ['SPDY/3.1 (kubectl port-forward)', 'POST', 'portforward?port=22', ['Upgrade: SPDY/3.1', 'X-Stream-Protocol-Version: portforward.k8s.io']],
    ['WebSocket (console)', 'GET', 'console', ['Upgrade: websocket', 'Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Protocol: plain.kubevirt.io']],
  ] as const) {
    it(`passes a ${name} upgrade to the container as HTTP/1.1 and carries bytes both ways; the open stream counts as a concurrent request`, async () => {
      const up = await rawUpgrade(env.apiserver, method, `${VM_PATH}/${sub}`, lines);
      try {
        expect(up.status).toBe(101);
        await up.until('the recorder’s line', '\n');
        const line = up.received().toString('utf8');
        const seen = JSON.parse(line.slice(0, line.indexOf('\n'))) as WireRecord;
        expect(seen).toMatchObject({ httpVersion: '1.1', method, path: `${VM_PATH}/${sub}` });
        expect(seen.headers.upgrade).toBe(lines[0].slice('Upgrade: '.length));
        const payload = Buffer.from(Array.from({ length: 100_000 }, (_, i) => i % 251));
        const offset = up.received().length;
        up.socket.write(payload);
        await waitFor('the bytes echoed back', () => Promise.resolve(up.received().length >= offset + payload.length ? true : undefined), { timeoutMs: 30_000 });
        expect(up.received().subarray(offset).equals(payload)).toBe(true);
        // A stream open through a whole 1 s period: concurrency 1 in that period's stat.
        await waitFor('the open stream in the queue-proxy stats', async () => ((await scrapeStat(recorder)).averageConcurrentRequests >= 0.9 ? true : undefined), {
          timeoutMs: 30_000,
          intervalMs: 250,
        });
      } finally {
        up.socket.destroy();
      }
    });
  }

  it('leaves the install’s function unreachable: HTTP/2 from the aggregator fails at our host, and HTTP/1.1 reaches it without the caller’s certificate', async () => {
    const fn = await env.startPod(1, { functionEnv: { METRICS_AUTH: 'none', LOG_LEVEL: 'warn', VIRT_API_URL: 'https://127.0.0.1:1' } });
    await env.setEndpoints('subresources-api', [fn]);
    // The aggregator's availability check (HTTP/2 to queue-proxy, h2c on to the function) fails.
    const down = await waitFor('the APIService unavailable behind the function’s queue-proxy', async () => {
      const a = await availability();
      return a.status === 'False' ? a : undefined;
    }, { timeoutMs: 120_000, intervalMs: 500, abortIf: () => fn.exited() });
    process.stderr.write(`[knsub] APIService Available=False: ${down.message}\n`);
    expect(down.message).toMatch(/502/);
    const r = await raw(VM_PATH);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('(ServiceUnavailable)');
    // The same over HTTP/2 straight to queue-proxy: 502 from queue-proxy.
    const h2Status = await new Promise<number>((resolve, reject) => {
      const session = http2Connect(`https://${fn.ip}:${QUEUE_TLS_PORT}`, { ca: env.ca, servername: env.serviceHost });
      session.on('error', reject);
      const req = session.request({ ':path': `/apis/${GROUP_VERSION}` });
      req.on('response', (h) => {
        resolve(Number(h[':status']));
        session.close();
      });
      req.on('error', reject);
      req.end();
    });
    expect(h2Status).toBe(502);
    // HTTP/1.1 with the aggregator's own front-proxy client certificate: queue-proxy ends that TLS
    // session, the function never sees the certificate and refuses.
    const pki = join(getTestEnv().workDir, 'pki');
    const refusal = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: fn.ip,
          port: QUEUE_TLS_PORT,
          path: VM_PATH,
          ca: env.ca,
          servername: env.serviceHost,
          cert: readFileSync(join(pki, 'front-proxy-client.crt')),
          key: readFileSync(join(pki, 'front-proxy-client.key')),
          headers: { 'x-remote-user': 'system:admin', 'x-remote-group': 'system:masters' },
          timeout: 10_000,
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject).end();
    });
    expect(refusal.status).toBe(401);
    expect(refusal.body).toContain('no client certificate');
  }, 300_000);
});
