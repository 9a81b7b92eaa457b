import { describe, expect, it } from '@jest/globals';
import { decodeBody } from './codec.js';
import { DuplicateFilter } from './dedup.js';
import { dispatch, KINDS, matchKind } from './dispatch.js';
import type { EventKind } from './kinds/kind.js';
import { processElements, type RejectedElement } from './pipeline.js';
import type { AuditRecord } from './records.js';
import { auditEvent, decoded, vectorEvent } from './testing/events.js';
import { FakeEnrichment } from './testing/fake-enrichment.js';
import { goldenWorld } from './testing/world.js';

describe('dispatch', () => {
  it('keeps the original order of the eight kinds', () => {
    expect(KINDS.map((k) => k.id)).toEqual([
      'forbid',
      'vm-manage',
      'vm-control',
      'vmop-control',
      'vm-access',
      'module-component-control',
      'module-control',
      'integrity-check',
    ]);
  });

  it('lets the first matching kind win when several would match', () => {
    const ev = decoded({
      verb: 'delete',
      requestURI: '/apis/virtualization.deckhouse.io/v1alpha2/namespaces/ns1/virtualmachines/vm1',
      objectRef: { resource: 'virtualmachines', namespace: 'ns1', name: 'vm1', apiGroup: 'virtualization.deckhouse.io' },
      annotations: { 'authorization.k8s.io/decision': 'forbid' },
    });
    expect(KINDS.filter((k) => k.matches(ev)).map((k) => k.id)).toEqual(['forbid', 'vm-manage']);
    expect(matchKind(ev)?.id).toBe('forbid');
  });

  it('considers an event once even when it passes several of the original log filters', async () => {
    const ev = auditEvent({ verb: 'delete', objectRef: { resource: 'pods', namespace: 'd8-virtualization', name: 'virt-handler-8k2lp' } });
    const records: AuditRecord[] = [];
    await processElements(decodeBody(JSON.stringify([vectorEvent(ev)])), { enrichment: goldenWorld(), emit: (r) => records.push(r) });
    expect(records).toHaveLength(1);
  });

  it('ignores events that concern nothing of the module, as the log-shipper filters did', async () => {
    const ev = decoded({
      verb: 'delete',
      objectRef: { resource: 'secrets', namespace: 'default', name: 's' },
      annotations: { 'authorization.k8s.io/decision': 'forbid' },
    });
    expect(await dispatch(ev, goldenWorld())).toEqual({ outcome: 'unmatched' });
  });

  it('turns a builder that throws into a failed outcome instead of an exception', async () => {
    const broken: EventKind = {
      id: 'forbid',
      matches: () => true,
      build: () => {
        throw new Error('boom');
      },
    };
    const ev = decoded({ objectRef: { resource: 'pods', namespace: 'ns1', name: 'p' } });
    expect(await dispatch(ev, new FakeEnrichment(), [broken])).toEqual({ outcome: 'failed', kind: 'forbid', detail: 'boom' });
  });
});

describe('processElements', () => {
  const deleteVM = (): Record<string, unknown> =>
    auditEvent({
      verb: 'delete',
      requestURI: '/apis/virtualization.deckhouse.io/v1alpha2/namespaces/ns1/virtualmachines/vm1',
      objectRef: { resource: 'virtualmachines', namespace: 'ns1', name: 'vm1', apiGroup: 'virtualization.deckhouse.io' },
    });

  it('reports each broken element once, processes the rest, and summarises the batch', async () => {
    const body = [JSON.stringify(vectorEvent(deleteVM())), 'garbage', JSON.stringify({ unrelated: true }), JSON.stringify(vectorEvent(auditEvent()))].join(
      '\n',
    );
    const rejected: RejectedElement[] = [];
    const records: AuditRecord[] = [];
    const summary = await processElements(decodeBody(body), { enrichment: goldenWorld(), emit: (r) => records.push(r), rejected: (r) => rejected.push(r) });
    expect(rejected.map((r) => [r.index, r.reason])).toEqual([
      [1, 'invalid_json'],
      [2, 'missing_message'],
    ]);
    expect(records.map((r) => r.type)).toEqual(['Manage VM']);
    expect(summary).toMatchObject({ received: 4, accepted: 2, records: 1, ignored: 1, duplicates: 0, undecided: 0 });
    expect(summary.rejected).toEqual(rejected);
  });

  it('emits one record for an audit event delivered twice', async () => {
    const line = JSON.stringify(vectorEvent(deleteVM()));
    const records: AuditRecord[] = [];
    const deps = { enrichment: goldenWorld(), duplicates: new DuplicateFilter({ ttlMs: 60_000, capacity: 100 }), emit: (r: AuditRecord) => records.push(r) };
    const first = await processElements(decodeBody(`${line}\n${line}`), deps);
    const second = await processElements(decodeBody(line), deps);
    expect(records).toHaveLength(1);
    expect([first.duplicates, second.duplicates]).toEqual([1, 1]);
  });

  it('counts events whose record cannot be decided', async () => {
    const ev = auditEvent({
      verb: 'patch',
      objectRef: {
        resource: 'internalvirtualizationvirtualmachineinstances',
        namespace: 'ns1',
        name: 'gone',
        apiGroup: 'internal.virtualization.deckhouse.io',
      },
    });
    const summary = await processElements(decodeBody(JSON.stringify(ev)), { enrichment: new FakeEnrichment(), emit: () => undefined });
    expect(summary).toMatchObject({ accepted: 1, records: 0, undecided: 1 });
  });
});
