/**
 * Golden records: for each event kind an audit line as it arrives from Vector and the exact record
 * line expected on stdout (compared as strings, so field order counts).
 */
import { describe, expect, it } from '@jest/globals';
import { decodeBody } from './codec.js';
import { processElements } from './pipeline.js';
import type { AuditRecord } from './records.js';
import { GOLDEN_CASES as CASES, golden } from './testing/golden.js';
import { goldenWorld } from './testing/world.js';

async function recordLines(body: string): Promise<string[]> {
  const records: AuditRecord[] = [];
  await processElements(decodeBody(body), { enrichment: goldenWorld(), emit: (r) => records.push(r) });
  return records.map((r) => JSON.stringify(r));
}

describe('golden audit records', () => {
  it('covers every event kind', () => {
    const kinds = ['forbid', 'vm-manage', 'vm-control', 'vmop', 'vm-access', 'module-component', 'module-control', 'integrity-check'];
    for (const kind of kinds) expect(CASES.some((c) => c.startsWith(kind))).toBe(true);
  });

  it.each(CASES)('%s: the Vector line yields exactly the expected record', async (name) => {
    const line = golden(name, 'input');
    const body = JSON.stringify([{ message: line, file: '/var/log/kube-audit/audit.log', source_type: 'file' }]);
    expect(await recordLines(body)).toEqual([golden(name, 'expected')]);
  });

  it.each(CASES)('%s: the same event in an apiserver EventList yields the same record', async (name) => {
    const event = JSON.parse(golden(name, 'input')) as unknown;
    const body = JSON.stringify({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {}, items: [event] });
    expect(await recordLines(body)).toEqual([golden(name, 'expected')]);
  });
});
