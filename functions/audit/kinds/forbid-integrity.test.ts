import { describe, expect, it } from '@jest/globals';
import type { Enrichment } from '../enrichment.js';
import { FakeEnrichment } from '../testing/fake-enrichment.js';
import { recordOf, verdict } from '../testing/run.js';
import { worldObjects } from '../testing/world.js';

describe('Forbidden operation', () => {
  const denied = { annotations: { 'authorization.k8s.io/decision': 'forbid', 'authorization.k8s.io/reason': 'some reason' } };
  const ref = { resource: 'pods', namespace: 'test', name: 'test-vmi' };

  it('names user, verb and resource path, and carries the reason and source addresses', async () => {
    expect(await recordOf({ ...denied, verb: 'create', objectRef: ref, user: { username: 'test-user' }, sourceIPs: ['10.1.1.1', '10.2.2.2'] })).toMatchObject({
      name: "User 'test-user' attempted to perform a forbidden operation 'create' on resource 'pods/test/test-vmi'.",
      source_ip: '10.1.1.1,10.2.2.2',
      forbid_reason: 'some reason',
      operation_result: 'forbid',
      is_admin: false,
    });
  });

  it('omits empty namespace and name from the resource path', async () => {
    const record = await recordOf({ ...denied, verb: 'list', objectRef: { resource: 'moduleconfigs', apiGroup: 'deckhouse.io' } });
    expect(record.name).toContain("on resource 'moduleconfigs'.");
  });

  it('marks a user allowed to manage ModuleConfigs or VM classes as admin', async () => {
    const world = new FakeEnrichment({ admins: ['root-ish'] });
    expect((await recordOf({ ...denied, objectRef: ref, user: { username: 'root-ish' } }, world)).is_admin).toBe(true);
    expect(world.adminQueries).toEqual(['root-ish']);
  });

  it('reports is_admin false when the access review cannot be made or fails', async () => {
    expect((await recordOf({ ...denied, objectRef: ref }, new FakeEnrichment({ adminUnknown: true }))).is_admin).toBe(false);
    const failing: Enrichment = Object.assign(new FakeEnrichment(), { isAdmin: (): Promise<boolean> => Promise.reject(new Error('unreachable')) });
    expect((await recordOf({ ...denied, objectRef: ref }, failing)).is_admin).toBe(false);
  });

  it.each([
    ['no objectRef', { ...denied, objectRef: undefined }],
    ['stage RequestReceived', { ...denied, objectRef: ref, stage: 'RequestReceived' }],
    ['an allowed request', { objectRef: ref }],
    ['a system user', { ...denied, objectRef: ref, user: { username: 'system:kube-scheduler' } }],
    ['a resource outside the module', { ...denied, objectRef: { resource: 'configmaps', namespace: 'default', name: 'x' } }],
  ])('ignores %s', async (_, event) => {
    expect(await verdict(event)).not.toBe('record:forbid');
  });
});

describe('Integrity check', () => {
  const ref = { resource: 'internalvirtualizationvirtualmachineinstances', namespace: 'ns1', name: 'vm1', apiGroup: 'internal.virtualization.deckhouse.io' };
  const vmi = (reference: string, applied: string): Record<string, unknown> => ({
    metadata: {
      name: 'vm1',
      namespace: 'ns1',
      annotations: {
        'integrity.virtualization.deckhouse.io/core-spec-checksum': reference,
        'integrity.virtualization.deckhouse.io/core-spec-checksum-applied': applied,
      },
    },
  });

  it('does not log when the checksums match', async () => {
    const world = new FakeEnrichment({ internalVMIs: [vmi('aa', 'aa')] });
    expect(await verdict({ verb: 'patch', objectRef: ref }, world)).toBe('not_logged:integrity-check');
  });

  it('logs the module controller changing a VMI whose checksums differ', async () => {
    const record = await recordOf({ verb: 'update', objectRef: ref, user: { username: 'system:serviceaccount:d8-virtualization:virtualization-controller' } });
    expect(record).toMatchObject({ type: 'Integrity check', level: 'critical', virtual_machine_namespace: 'ns1' });
  });

  it('reads the checksums from the response object when the VMI is not known', async () => {
    const record = await recordOf({ verb: 'patch', objectRef: ref, responseObject: vmi('aa', 'bb') }, new FakeEnrichment());
    expect(record).toMatchObject({ reference_checksum: 'aa', current_checksum: 'bb' });
  });

  it('cannot decide when the VMI is neither known nor in the response', async () => {
    expect(await verdict({ verb: 'patch', objectRef: ref }, new FakeEnrichment())).toBe('undecidable:integrity-check');
  });

  it.each([
    ['no objectRef', { verb: 'patch', objectRef: undefined }],
    ['stage RequestReceived', { verb: 'patch', objectRef: ref, stage: 'RequestReceived' }],
    ['another resource', { verb: 'patch', objectRef: { ...ref, resource: 'virtualmachines' } }],
    ['an empty name', { verb: 'patch', objectRef: { ...ref, name: '' } }],
    ['a verb other than patch or update', { verb: 'delete', objectRef: ref }],
    ['another system user', { verb: 'patch', objectRef: ref, user: { username: 'system:serviceaccount:kube-system:gc' } }],
  ])('ignores %s', async (_, event) => {
    expect(await verdict(event, new FakeEnrichment(worldObjects()))).toBe('unmatched');
  });
});
