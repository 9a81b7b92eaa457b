/** The function served in-process over real HTTP: the three inputs, broken input, metrics. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FunctionDefinition } from '../../shared/runtime/index.js';
import type { auditConfigSchema } from './config.js';
import { auditFunction, type AuditState } from './index.js';
import { auditEvent, vectorEvent } from './testing/events.js';
import { golden } from './testing/golden.js';
import { serveAudit, type ServedAudit } from './testing/serve.js';

const VECTOR_CE = { 'ce-specversion': '1.0', 'ce-id': 'batch-1', 'ce-type': 'vector.audit', 'ce-source': '/vector' };

describe('audit function over HTTP', () => {
  let audit: ServedAudit;
  beforeAll(async () => {
    // METRICS_AUTH none: the metrics test reads /metrics without a token (the guard is tested in
    // shared/authz and tests/integration/metrics-auth).
    audit = await serveAudit({ METRICS_AUTH: 'none' });
  });
  afterAll(async () => audit.close());

  const take = (): string[] => audit.lines.splice(0);

  it('is declared as one typed function value', () => {
    expect((auditFunction satisfies FunctionDefinition<typeof auditConfigSchema, AuditState>).name).toBe('audit');
  });

  it('answers a Vector batch with what it accepted and writes the records in order', async () => {
    const body = JSON.stringify([{ message: golden('forbid', 'input') }, { message: '{broken' }, { message: golden('vmop-stop', 'input') }]);
    const res = await audit.post('/vector', body, { 'content-type': 'application/json', ...VECTOR_CE });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ received: 3, accepted: 2, rejected: 1, records: 2, rejections: [{ index: 1, reason: 'invalid_json' }] });
    expect(take()).toEqual([golden('forbid', 'expected'), golden('vmop-stop', 'expected')]);
  });

  it('rejects a 5 MB NDJSON line and still processes its neighbours', async () => {
    const body = [
      JSON.stringify({ message: golden('vm-manage-patch', 'input') }),
      'x'.repeat(5 * 1024 * 1024),
      JSON.stringify({ message: golden('vm-access-vnc-finished', 'input') }),
    ].join('\n');
    const res = await audit.post('/vector', body, { 'content-type': 'application/x-ndjson' });
    expect(JSON.parse(res.text)).toMatchObject({ accepted: 2, rejections: [{ index: 1, reason: 'line_too_large' }] });
    expect(take()).toEqual([golden('vm-manage-patch', 'expected'), golden('vm-access-vnc-finished', 'expected')]);
  });

  it('answers 400 when nothing in the batch could be accepted', async () => {
    const res = await audit.post('/vector', 'not json\nstill not json', { 'content-type': 'application/x-ndjson' });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ received: 2, accepted: 0, rejected: 2 });
  });

  it('takes an apiserver EventList on the webhook path', async () => {
    const list = {
      kind: 'EventList',
      apiVersion: 'audit.k8s.io/v1',
      metadata: {},
      items: [JSON.parse(golden('integrity-check-failed', 'input')) as unknown, auditEvent()],
    };
    const res = await audit.post('/audit-webhook', JSON.stringify(list));
    expect(JSON.parse(res.text)).toMatchObject({ received: 2, accepted: 2, records: 1, ignored: 1 });
    expect(take()).toEqual([golden('integrity-check-failed', 'expected')]);
  });

  it('takes a Vector batch sent as a binary-mode CloudEvent', async () => {
    const body = JSON.stringify([vectorEvent(JSON.parse(golden('module-component-deleted', 'input')))]);
    const res = await audit.post('/', body, { 'content-type': 'application/json', ...VECTOR_CE, 'ce-id': 'batch-2' });
    expect(res.status).toBe(204);
    expect(take()).toEqual([golden('module-component-deleted', 'expected')]);
  });

  it('takes NDJSON in a binary-mode CloudEvent', async () => {
    const body = `${JSON.stringify({ message: golden('vm-control-killed', 'input') })}\n`;
    const res = await audit.post('/', body, { 'content-type': 'application/x-ndjson', ...VECTOR_CE, 'ce-id': 'batch-3' });
    expect(res.status).toBe(204);
    expect(take()).toEqual([golden('vm-control-killed', 'expected')]);
  });

  it('takes a structured CloudEvent whose data is an audit Event', async () => {
    const ce = {
      specversion: '1.0',
      id: 'e1',
      type: 'audit.event',
      source: '/test',
      datacontenttype: 'application/json',
      data: JSON.parse(golden('module-control-disabled', 'input')) as unknown,
    };
    const res = await audit.post('/', JSON.stringify(ce), { 'content-type': 'application/cloudevents+json' });
    expect(res.status).toBe(204);
    expect(take()).toEqual([golden('module-control-disabled', 'expected')]);
  });

  it('answers each event of a CloudEvents batch on its own', async () => {
    const good = { specversion: '1.0', id: 'b1', type: 'audit.event', source: '/test', data: JSON.parse(golden('vm-manage-create', 'input')) as unknown };
    const broken = { specversion: '1.0', id: 'b2', type: 'audit.event', source: '/test', data: { hello: 'world' } };
    const res = await audit.post('/', JSON.stringify([good, broken]), { 'content-type': 'application/cloudevents-batch+json' });
    const results = (JSON.parse(res.text) as { results: Array<{ id: string; status: number }> }).results;
    expect(results.map((r) => [r.id, r.status])).toEqual([
      ['b1', 204],
      ['b2', 400],
    ]);
    expect(take()).toEqual([golden('vm-manage-create', 'expected')]);
  });

  it('counts accepted and rejected elements by input and reason on /metrics', async () => {
    const text = await (await fetch(`${audit.server.url}/metrics`)).text();
    expect(text).toContain('audit_rejected_elements_total{input="vector",reason="invalid_json"} 3');
    expect(text).toContain('audit_rejected_elements_total{input="vector",reason="line_too_large"} 1');
    expect(text).toMatch(/audit_elements_total\{input="webhook",result="accepted"\} 2/);
    expect(text).toMatch(/audit_records_total\{kind="integrity-check"\} 1/);
  });
});
