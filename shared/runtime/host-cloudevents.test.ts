import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { binaryHeaders, rawExchange, send, startProbe, PROBE_BODY_LIMIT, type TestRequest } from './testing/index.js';
import type { ServerHandle } from './server.js';

const STRUCTURED = 'application/cloudevents+json';
const BATCH = 'application/cloudevents-batch+json';

function structured(event: Record<string, unknown>): TestRequest {
  return { method: 'POST', headers: { 'content-type': STRUCTURED }, body: JSON.stringify(event) };
}

function attributes(id: string, type = 'probe.echo'): Record<string, string> {
  return { id, type, source: '/tests', specversion: '1.0' };
}

describe('function host: CloudEvents over real HTTP', () => {
  let host: ServerHandle;
  beforeEach(async () => {
    ({ host } = await startProbe());
  });
  afterEach(async () => {
    await host.close();
  });

  /** After any bad request the same server must still answer a good one. */
  async function expectStillServing(): Promise<void> {
    const res = await send(host.url, { method: 'POST', headers: binaryHeaders({ id: 'after', type: 'probe.echo' }), body: '{}' });
    expect(res.status).toBe(200);
  }

  it('answers a binary-mode event with a binary-mode reply carrying the data', async () => {
    const res = await send(host.url, {
      method: 'POST',
      headers: binaryHeaders({ id: 'b1', type: 'probe.echo' }),
      body: JSON.stringify({ vm: 'alpha' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({ 'ce-id': 'b1-reply', 'ce-type': 'probe.reply', 'ce-source': '/probe', 'ce-specversion': '1.0' });
    expect(res.json()).toEqual({ vm: 'alpha' });
  });

  it('answers a structured-mode event with a structured-mode reply', async () => {
    const res = await send(host.url, structured({ ...attributes('s1'), data: { disk: 7 } }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/cloudevents\+json/);
    expect(res.json()).toMatchObject({ id: 's1-reply', type: 'probe.reply', specversion: '1.0', data: { disk: 7 } });
  });

  it('hands ce- header values to the handler as sent and sends the reply’s as they are (the SDK does no percent-coding)', async () => {
    const headers = { ...binaryHeaders({ id: 'p1', type: 'probe.echo' }), 'ce-subject': 'vm%20%E2%82%AC', 'ce-vmname': '"alpha beta"' };
    const res = await send(host.url, { method: 'POST', headers, body: '{}' });
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({ 'ce-subject': 'vm%20%E2%82%AC', 'ce-vmname': '"alpha beta"' });
  });

  it('hands other content types to the handler as bytes and answers with the same bytes', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const headers = { ...binaryHeaders({ id: 'o1', type: 'probe.echo' }), 'content-type': 'application/octet-stream' };
    const res = await send(host.url, { method: 'POST', headers, body: bytes });
    expect([res.status, res.headers['content-type'], res.headers['content-length'], res.body.slice(0, 3)]).toEqual([
      200,
      'application/octet-stream',
      '5',
      '\u0000\u0001\u0002',
    ]);
    const structuredReply = await send(host.url, structured({ ...attributes('o2'), data_base64: bytes.toString('base64') }));
    expect(structuredReply.json()).toMatchObject({ id: 'o2-reply', data_base64: bytes.toString('base64') });
    expect(structuredReply.json()).not.toHaveProperty('data');
  });

  it('answers 204 when the handler returns no event', async () => {
    const res = await send(host.url, { method: 'POST', headers: binaryHeaders({ id: 'q', type: 'probe.silent' }) });
    expect([res.status, res.body]).toEqual([204, '']);
  });

  it('gives each batch element its own result, so broken elements fail alone', async () => {
    const batch = [
      { ...attributes('ok-1'), data: 1 },
      { id: 'no-source', type: 'probe.echo', specversion: '1.0' },
      { ...attributes('v2'), specversion: '2.0' }, // the SDK takes any specversion
      'not an object',
      attributes('conflict', 'probe.conflict'),
      attributes('silent', 'probe.silent'),
      { ...attributes('ok-2'), data: 2 },
    ];
    const res = await send(host.url, { method: 'POST', headers: { 'content-type': BATCH }, body: JSON.stringify(batch) });
    expect(res.status).toBe(200);
    const { results } = res.json() as { results: Array<Record<string, unknown>> };
    expect(results.map((r) => [r['index'], r['id'], r['status']])).toEqual([
      [0, 'ok-1', 200],
      [1, 'no-source', 400],
      [2, 'v2', 200],
      [3, undefined, 400],
      [4, 'conflict', 409],
      [5, 'silent', 204],
      [6, 'ok-2', 200],
    ]);
    expect(results[0]).toMatchObject({ event: { id: 'ok-1-reply', data: 1 } });
    expect(results[1]).toMatchObject({
      error: { code: 'BAD_REQUEST', message: "invalid batch element 1: invalid payload; (event): must have required property 'source'" },
    });
    expect(results[3]).toMatchObject({ error: { message: 'batch element 3 must be a JSON object, got string' } });
  });

  const binary = binaryHeaders({ id: 'm', type: 'probe.echo' });
  const withoutHeader = (name: string): Record<string, string> => Object.fromEntries(Object.entries(binary).filter(([key]) => key !== name));

  it.each<[string, TestRequest, number, RegExp]>([
    ['structured body that is not JSON', { ...structured({}), body: '{"id": "x",' }, 400, /structured CloudEvent is not valid JSON/],
    ['binary data that is not JSON', { method: 'POST', headers: binary, body: '{oops}' }, 400, /binary-mode CloudEvent is not valid JSON/],
    ['binary event without ce-id', { method: 'POST', headers: withoutHeader('ce-id'), body: '{}' }, 400, /not a CloudEvent: .*no ce-id/],
    ['a binary event with an empty ce-id', { method: 'POST', headers: { ...binary, 'ce-id': '' } }, 400, /not a CloudEvent: .*no ce-id/],
    ['a binary event without ce-source', { method: 'POST', headers: withoutHeader('ce-source') }, 400, /must have required property 'source'/],
    ['binary JSON data cut short', { method: 'POST', headers: binary, body: '{"vm":"al' }, 400, /is not valid JSON/],
    ['a structured event with an upper-case attribute', structured({ ...attributes('x'), vmName: 'a' }), 400, /invalid attribute name: "vmName"/],
    ['structured event without id and type', structured({ source: '/x', specversion: '1.0' }), 400, /must have required property/],
    ['a source that is not a URI reference', structured({ ...attributes('x'), source: 'a b%' }), 400, /\/source: must match format "uri-reference"/],
    ['a content type that is no CloudEvent', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' }, 400, /not a CloudEvent.*"text\/plain"/],
    [
      'an unsupported structured format',
      { method: 'POST', headers: { 'content-type': 'application/cloudevents+xml' }, body: '<e/>' },
      400,
      /structured CloudEvent is not valid JSON/,
    ],
    ['a batch that is not an array', { method: 'POST', headers: { 'content-type': BATCH }, body: '{}' }, 400, /must be a JSON array, got object/],
    ['a body over the limit', { method: 'POST', headers: binary, body: `"${'x'.repeat(PROBE_BODY_LIMIT)}"` }, 413, /larger than the limit of 1024 bytes/],
    ['a huge body (4 MiB)', { method: 'POST', headers: binary, body: Buffer.alloc(4 * 1024 * 1024, 0x20) }, 413, /larger than the limit of 1024 bytes/],
    ['a huge structured body (4 MiB)', { ...structured({}), body: Buffer.alloc(4 * 1024 * 1024, 0x7b) }, 413, /larger than the limit/],
    ['a structured body truncated mid-document', { ...structured({}), body: JSON.stringify(attributes('t')).slice(0, 30) }, 400, /not valid JSON/],
  ])('rejects %s with a readable message and keeps serving', async (_case, request, status, message) => {
    const res = await send(host.url, request);
    expect(res.status).toBe(status);
    expect(res.json()).toEqual({ error: { code: expect.any(String), message: expect.stringMatching(message) } });
    await expectStillServing();
  });

  // Where the SDK is laxer than the host's own codec was (docs/adr/0020-function-host-on-express.md): accepted.
  it.each<[string, TestRequest]>([
    ['a binary event without ce-specversion (read as 1.0)', { method: 'POST', headers: withoutHeader('ce-specversion') }],
    ['a binary event with specversion 0.3', { method: 'POST', headers: { ...binary, 'ce-specversion': '0.3' } }],
    ['a ce- header value that is no percent-encoding', { method: 'POST', headers: { ...binary, 'ce-subject': '50%' } }],
    ['a time on February 30 (read as March 2)', structured({ ...attributes('x', 'probe.silent'), time: '2025-02-30T10:00:00Z' })],
    ['an unknown specversion', structured({ ...attributes('x', 'probe.silent'), specversion: '0.9' })],
  ])('follows the SDK and accepts %s', async (_case, request) => {
    const res = await send(host.url, request);
    expect(res.status).toBeLessThan(300);
  });

  it('rejects a chunked body over the limit with 413', async () => {
    const chunk = 'x'.repeat(512);
    const head = `POST / HTTP/1.1\r\nHost: t\r\nce-id: c\r\nce-type: probe.echo\r\nce-source: /t\r\nce-specversion: 1.0\r\n`;
    const chunked = `${head}content-type: text/plain\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n`;
    const body = `200\r\n${chunk}\r\n`.repeat(3) + '0\r\n\r\n';
    const answer = await rawExchange(host.port, chunked + body);
    expect(answer).toMatch(/^HTTP\/1.1 413 /);
    expect(answer).toContain('larger than the limit of 1024 bytes');
    await expectStillServing();
  });

  it('answers 400 when the connection ends before the declared Content-Length arrived', async () => {
    const head = 'POST / HTTP/1.1\r\nHost: t\r\ncontent-type: application/cloudevents+json\r\ncontent-length: 200\r\n\r\n';
    const answer = await rawExchange(host.port, `${head}{"id":"cut","sou`, { halfClose: true });
    expect(answer).toMatch(/^HTTP\/1.1 400 /);
    expect(answer).toContain('the connection ended before the whole request arrived');
    await expectStillServing();
  });

  it('hides unexpected handler failures behind an opaque 500 and maps AppErrors to their status', async () => {
    const crash = await send(host.url, { method: 'POST', headers: binaryHeaders({ id: 'c', type: 'probe.crash' }) });
    const conflict = await send(host.url, { method: 'POST', headers: binaryHeaders({ id: 'c', type: 'probe.conflict' }) });
    expect([crash.status, crash.json()]).toEqual([500, { error: { code: 'INTERNAL', message: 'internal error' } }]);
    expect([conflict.status, conflict.json()]).toEqual([409, { error: { code: 'CONFLICT', message: 'conflict on purpose' } }]);
  });
});
