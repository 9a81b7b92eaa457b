/** Records out: stdout lines, CloudEvents to K_SINK with retries, and an unreachable apiserver. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { waitFor } from '../../shared/testing/wait.js';
import { recordWriter } from './output.js';
import { forbidRecord, RecordType } from './records.js';
import { MemoryDestination } from './testing/memory-destination.js';
import { golden } from './testing/golden.js';
import { serveAudit, type ServedAudit } from './testing/serve.js';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

/** A CloudEvents receiver answering with the given statuses in turn (the last one repeats). */
async function receiver(statuses: number[]): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(statuses[Math.min(received.length - 1, statuses.length - 1)] ?? 202).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, received, server };
}

describe('record outputs', () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0)) await fn();
  });

  it('writes each record as exactly one JSON line, fields in record order', () => {
    const out = new MemoryDestination();
    const record = forbidRecord(
      { type: RecordType.forbidden, level: 'warn', name: 'n' },
      { datetime: 'd', uid: 'u', request_subject: 's', operation_result: 'forbid' },
      { is_admin: false, source_ip: '', forbid_reason: 'unknown' },
    );
    const writer = recordWriter(out);
    writer.write(record);
    writer.write(record);
    expect(out.lines).toEqual([]); // held until the batch is flushed: one write per batch
    writer.flush();
    writer.flush();
    expect(out.lines).toHaveLength(2);
    expect(out.lines).toEqual([out.lines[0], out.lines[0]]);
    expect(out.lines.slice(1)).toEqual([
      '{"type":"Forbidden operation","level":"warn","name":"n","datetime":"d","uid":"u","request_subject":"s","operation_result":"forbid","is_admin":false,"source_ip":"","forbid_reason":"unknown"}',
    ]);
  });

  it('sends each record to K_SINK as a binary CloudEvent, retrying a 503', async () => {
    const sink = await receiver([503, 202]);
    // METRICS_AUTH none here and below: these tests read /metrics without a token.
    const audit: ServedAudit = await serveAudit({ K_SINK: sink.url, K_CE_OVERRIDES: '{"extensions":{"cluster":"prod"}}', METRICS_AUTH: 'none' });
    cleanup.push(
      () => audit.close(),
      () => new Promise((r) => sink.server.close(() => r())),
    );
    await audit.post('/vector', JSON.stringify([{ message: golden('vm-manage-create', 'input') }]));
    await waitFor('the retried delivery', () => sink.received.length === 2);
    const [first, second] = sink.received;
    expect(second?.body).toBe(golden('vm-manage-create', 'expected'));
    expect(second?.headers).toMatchObject({
      'ce-type': 'io.deckhouse.virtualization.audit.record.v1',
      'ce-subject': 'vm-manage',
      'ce-cluster': 'prod',
      'content-type': 'application/json',
    });
    expect(second?.headers['ce-id']).toBe(first?.headers['ce-id']);
    await waitFor('the record on stdout', () => audit.lines.length === 1);
    const metrics = await (await fetch(`${audit.server.url}/metrics`)).text();
    expect(metrics).toContain('audit_sink_records_total{result="delivered"} 1');
  });

  it('gives up at once on a 400 from K_SINK and keeps the record on stdout', async () => {
    const sink = await receiver([400]);
    const audit = await serveAudit({ K_SINK: sink.url, METRICS_AUTH: 'none' });
    cleanup.push(
      () => audit.close(),
      () => new Promise((r) => sink.server.close(() => r())),
    );
    await audit.post('/vector', JSON.stringify([{ message: golden('vm-manage-patch', 'input') }]));
    const metrics = async (): Promise<string> => (await fetch(`${audit.server.url}/metrics`)).text();
    await waitFor('the delivery counted as failed', async () => (await metrics()).includes('audit_sink_records_total{result="failed"} 1'));
    expect(sink.received).toHaveLength(1);
    expect(audit.lines).toEqual([golden('vm-manage-patch', 'expected')]);
  });

  it('still writes records, with unknown fields, when the apiserver cannot be reached', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-'));
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: x, context: {cluster: c, user: u}}]',
        'current-context: x',
        '',
      ].join('\n'),
    );
    const audit = await serveAudit({ KUBECONFIG: kubeconfig, AUDIT_SYNC_WAIT_MS: '200' }, null);
    cleanup.push(() => audit.close());
    const res = await audit.post('/vector', JSON.stringify([{ message: golden('vm-manage-create', 'input') }, { message: golden('forbid', 'input') }]));
    expect(JSON.parse(res.text)).toMatchObject({ records: 2 });
    expect(audit.lines).toEqual([
      golden('vm-manage-create', 'expected').replace(
        /"node_network_address".*"libvirt_version":"[^"]*"/,
        '"node_network_address":"unknown","virtual_machine_name":"unknown","virtual_machine_namespace":"unknown","virtualmachine_uid":"unknown","virtualmachine_os":"unknown","storageclasses":"unknown","qemu_version":"unknown","libvirt_version":"unknown"',
      ),
      golden('forbid', 'expected'),
    ]);
  });
});
