/** Whatever arrives, the decoder and the dispatcher answer with results, never with an exception. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { decodeBody, decodeValue } from './codec.js';
import { processElements } from './pipeline.js';
import type { AuditRecord } from './records.js';
import { vectorEvent } from './testing/events.js';
import { goldenEvents } from './testing/golden.js';
import { FakeEnrichment } from './testing/fake-enrichment.js';
import { goldenWorld } from './testing/world.js';

const KEY_ORDERS = [
  'type,level,name,datetime,uid,request_subject,operation_result,is_admin,source_ip,forbid_reason',
  'type,level,name,datetime,uid,request_subject,action_type,node_network_address,virtual_machine_name,virtual_machine_namespace,virtualmachine_uid,virtualmachine_os,storageclasses,qemu_version,libvirt_version,operation_result',
  'type,level,name,datetime,uid,request_subject,operation_result,action_type,component,node_network_address,virtualization_version,virtualization_name,qemu_version,libvirt_version',
  'type,level,name,datetime,uid,request_subject,operation_result,object_type,virtual_machine_name,virtual_machine_namespace,control_method,reaction_type,integrity_check_algo,reference_checksum,current_checksum',
];

const word = fc.constantFrom(
  'create',
  'update',
  'patch',
  'delete',
  'get',
  'list',
  'ResponseComplete',
  'RequestReceived',
  'RequestResponse',
  'pods',
  'virtualmachines',
  'virtualmachineoperations',
  'moduleconfigs',
  'internalvirtualizationvirtualmachineinstances',
  'd8-virtualization',
  'ns1',
  'vm1',
  'virt-launcher-vm1-x7k2p',
  'console',
  'forbid',
  'system:node:n',
  'jane',
  'subresources.virtualization.deckhouse.io',
  'virtualization.deckhouse.io',
  '',
);
const value = fc.oneof(word, fc.anything());

const GOLDEN_EVENTS = goldenEvents();

const FIELDS = [
  'verb',
  'stage',
  'level',
  'auditID',
  'requestURI',
  'user',
  'objectRef',
  'annotations',
  'responseObject',
  'sourceIPs',
  'requestReceivedTimestamp',
];
const objectish = fc.oneof(
  value,
  fc.record({ username: value }),
  fc.record({ resource: value, namespace: value, name: value, apiGroup: value, subresource: value }, { requiredKeys: [] }),
  fc.dictionary(fc.constantFrom('authorization.k8s.io/decision', 'authorization.k8s.io/reason', 'x'), value),
);

/** A golden event with up to three of its fields replaced by arbitrary or domain-flavoured values. */
const mutatedEvent = fc
  .tuple(fc.constantFrom(...GOLDEN_EVENTS), fc.array(fc.tuple(fc.constantFrom(...FIELDS), objectish), { maxLength: 3 }))
  .map(([base, changes]) => ({ ...base, ...Object.fromEntries(changes) }));

async function processAll(elements: ReturnType<typeof decodeValue>): Promise<AuditRecord[]> {
  const records: AuditRecord[] = [];
  for (const enrichment of [goldenWorld(), new FakeEnrichment({ adminUnknown: true })]) {
    const summary = await processElements(elements, { enrichment, emit: (r) => records.push(r) });
    expect(summary.accepted + summary.rejected.length).toBe(elements.length);
  }
  return records;
}

describe('decoder and dispatcher on arbitrary input', () => {
  it('decode any text or bytes into per-element results without throwing', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.uint8Array(),
          fc.json(),
          fc.array(fc.json()).map((a) => a.join('\n')),
        ),
        (body) => {
          const results = decodeBody(body);
          results.forEach((r) => expect(r.index).toBeGreaterThanOrEqual(0));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('decode any JSON value without throwing', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => void decodeValue(v)),
      { numRuns: 500 },
    );
  });

  it('dispatch mutated events to at most one record each, always in a documented field order', async () => {
    let total = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(mutatedEvent, { maxLength: 5 }), fc.boolean(), async (events, asVector) => {
        const elements = decodeValue(asVector ? events.map(vectorEvent) : { kind: 'EventList', items: events });
        const records = await processAll(elements);
        expect(records.length).toBeLessThanOrEqual(2 * elements.length);
        for (const r of records) expect(KEY_ORDERS).toContain(Object.keys(r).join(','));
        total += records.length;
      }),
      { numRuns: 300 },
    );
    // The mutations must keep enough events intact for the field-order check to have been exercised.
    expect(total).toBeGreaterThan(20);
  });
});
