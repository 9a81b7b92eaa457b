/**
 * The webhook proxy between an apiserver (this test, as the client) and a stand-in for KubeVirt's
 * webhook server (a local HTTPS server recording the reviews it gets and answering a scripted patch).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { issueCertificate } from '../../shared/certs/index.js';
import { rootLogger } from '../../shared/log/index.js';
import { KUBEVIRT_RULES, Renamer } from './rules/index.js';
import { renamedVmReview } from './rules/testdata/reviews.js';
import { ApiRewriterMetrics } from './metrics.js';
import { createWebhookHandler } from './webhook.js';

const INT = 'internal.virtualization.deckhouse.io';
const now = Date.now();
const cert = issueCertificate({
  commonName: 'localhost',
  ipAddresses: ['127.0.0.1'],
  usage: 'server',
  notBefore: new Date(now - 60_000),
  notAfter: new Date(now + 3_600_000),
});
const received: { url: string; body: string }[] = [];
let kubevirtWebhook: https.Server;
let proxy: https.Server;
let proxyPort = 0;
let answerPatch: unknown = [{ op: 'add', path: '/metadata/labels/kubevirt.io~1mutated', value: 'yes' }];

async function listen(server: https.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function post(path: string, body: string): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port: proxyPort, path, method: 'POST', ca: cert.certPem, headers: { 'content-type': 'application/json' }, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const review = renamedVmReview();

beforeAll(async () => {
  kubevirtWebhook = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ url: req.url ?? '', body });
      const uid = (JSON.parse(body) as { request: { uid: string } }).request.uid;
      const patch = Buffer.from(JSON.stringify(answerPatch)).toString('base64');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true, patchType: 'JSONPatch', patch } }));
    });
  });
  const target = new URL(`https://127.0.0.1:${await listen(kubevirtWebhook)}`);
  proxy = https.createServer(
    { cert: cert.certPem, key: cert.keyPem },
    createWebhookHandler({ renamer: new Renamer(KUBEVIRT_RULES), target, metrics: new ApiRewriterMetrics(), log: rootLogger, maxBodyBytes: 64 * 1024 }),
  );
  proxyPort = await listen(proxy);
});

afterAll(async () => {
  for (const s of [proxy, kubevirtWebhook]) s.closeAllConnections();
  await Promise.all([new Promise((r) => proxy.close(r)), new Promise((r) => kubevirtWebhook.close(r))]);
});

describe('webhook proxy', () => {
  it("restores the review for KubeVirt's webhook and renames its patch for the apiserver", async () => {
    const res = await post('/virtualmachines-mutate?timeout=10s', JSON.stringify(review));
    expect(res.status).toBe(200);
    const seen = JSON.parse(received.at(-1)?.body ?? '{}') as typeof review;
    expect(received.at(-1)?.url).toBe('/virtualmachines-mutate?timeout=10s');
    expect(seen.request.kind).toEqual({ group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine' });
    expect(seen.request.object.metadata.labels).toEqual({ 'kubevirt.io/a': 'b' });
    const response = res.json['response'] as { patch: string; allowed: boolean };
    expect(response.allowed).toBe(true);
    expect(JSON.parse(Buffer.from(response.patch, 'base64').toString())).toEqual([
      { op: 'add', path: `/metadata/labels/kubevirt.${INT}~1mutated`, value: 'yes' },
    ]);
  });

  it('passes reviews of paths it does not know as they are', async () => {
    const res = await post('/some-other-webhook', JSON.stringify(review));
    expect(res.status).toBe(200);
    expect(JSON.parse(received.at(-1)?.body ?? '{}')).toEqual(review);
    expect(JSON.parse(Buffer.from((res.json['response'] as { patch: string }).patch, 'base64').toString())).toEqual(answerPatch);
  });

  it('refuses a body that is not an AdmissionReview with 400 and passes a broken patch answer as it is', async () => {
    const count = received.length;
    const bad = await post('/virtualmachines-validate', '{"kind": "AdmissionReview", ');
    expect(bad.status).toBe(400);
    expect(bad.json['message']).toMatch(/not an AdmissionReview this proxy can rewrite/);
    const notReview = await post('/virtualmachines-validate', '{"kind":"Pod"}');
    expect(notReview.status).toBe(400);
    expect(received.length).toBe(count);
    answerPatch = { not: 'an array' };
    const res = await post('/virtualmachines-mutate', JSON.stringify(review));
    expect(res.status).toBe(200);
    expect(JSON.parse(Buffer.from((res.json['response'] as { patch: string }).patch, 'base64').toString())).toEqual({ not: 'an array' });
  });
});
