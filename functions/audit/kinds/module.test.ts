import { describe, expect, it } from '@jest/globals';
import { FakeEnrichment } from '../testing/fake-enrichment.js';
import { recordOf, verdict } from '../testing/run.js';
import { worldObjects } from '../testing/world.js';

describe('Virtualization control (module pods)', () => {
  const ref = { resource: 'pods', namespace: 'd8-virtualization', name: 'virt-handler-8k2lp' };

  it('logs a pod created by a user at info, with the component named after the pod', async () => {
    expect(await recordOf({ verb: 'create', objectRef: ref })).toMatchObject({
      type: 'Virtualization control',
      level: 'info',
      name: "Component 'virt-handler-8k2lp' has been created by 'jane'",
      component: 'virt-handler-8k2lp',
      action_type: 'create',
    });
  });

  it('still logs a deletion with defaults when pod, node and module are all unknown', async () => {
    expect(await recordOf({ verb: 'delete', objectRef: ref }, new FakeEnrichment())).toMatchObject({
      level: 'warn',
      qemu_version: 'unknown',
      node_network_address: 'unknown',
      virtualization_version: 'unknown',
      virtualization_name: 'Deckhouse Virtualization Platform',
    });
  });

  it('writes empty qemu and libvirt versions, as the original does, for a known pod without the annotations', async () => {
    const objects = worldObjects();
    const pods = (objects.pods ?? []).map((p) => (p.metadata?.name === ref.name ? { ...p, metadata: { ...p.metadata, annotations: {} } } : p));
    const record = await recordOf({ verb: 'delete', objectRef: ref }, new FakeEnrichment({ ...objects, pods }));
    expect(record).toMatchObject({ component: ref.name, qemu_version: '', libvirt_version: '' });
    expect(record.node_network_address).not.toBe('unknown');
  });

  it.each([
    ['a pod in another namespace', { verb: 'delete', objectRef: { ...ref, namespace: 'ns1' } }],
    ['an image importer pod', { verb: 'delete', objectRef: { ...ref, name: 'cvi-importer-abc' } }],
    ['the replicaset controller', { verb: 'create', objectRef: ref, user: { username: 'system:serviceaccount:kube-system:replicaset-controller' } }],
    ['the daemon-set controller', { verb: 'delete', objectRef: ref, user: { username: 'system:serviceaccount:kube-system:daemon-set-controller' } }],
    ['the job controller', { verb: 'delete', objectRef: ref, user: { username: 'system:serviceaccount:kube-system:job-controller' } }],
    ['a get', { verb: 'get', objectRef: ref }],
    ['a list', { verb: 'list', objectRef: { ...ref, name: '' } }],
  ])('ignores %s', async (_, event) => {
    expect(await verdict(event)).toBe('unmatched');
  });
});

describe('Module control (ModuleConfigs)', () => {
  const ref = { resource: 'moduleconfigs', name: 'virtualization', apiGroup: 'deckhouse.io' };
  const disabledWorld = (): FakeEnrichment =>
    new FakeEnrichment({ ...worldObjects(), moduleConfigs: [{ metadata: { name: 'virtualization' }, spec: { enabled: false } }] });

  it.each([
    ['create', 'info', 'created'],
    ['update', 'info', 'updated'],
    ['patch', 'info', 'updated'],
    ['delete', 'warn', 'deleted'],
  ])('a %s is logged at %s', async (verb, level, past) => {
    expect(await recordOf({ verb, objectRef: ref })).toMatchObject({
      type: 'Module control',
      level,
      name: `Module 'virtualization' has been ${past} by 'jane'`,
      component: 'virtualization',
      virtualization_version: 'v1.1.0',
    });
  });

  it('reports an update that leaves the module disabled as disabled, from the informer', async () => {
    expect(await recordOf({ verb: 'update', objectRef: ref }, disabledWorld())).toMatchObject({
      level: 'warn',
      name: "Module 'virtualization' has been disabled by 'jane'",
    });
  });

  it('trusts the response object over the informer for the state after the change', async () => {
    const responseObject = { kind: 'ModuleConfig', metadata: { name: 'virtualization' }, spec: { enabled: true } };
    expect((await recordOf({ verb: 'patch', objectRef: ref, responseObject }, disabledWorld())).name).toContain('has been updated');
  });

  it('treats an unset enabled flag and a missing ModuleConfig as a plain update', async () => {
    const unset = new FakeEnrichment({ moduleConfigs: [{ metadata: { name: 'virtualization' }, spec: {} }] });
    expect((await recordOf({ verb: 'patch', objectRef: ref }, unset)).name).toContain('has been updated');
    expect(await recordOf({ verb: 'patch', objectRef: ref }, new FakeEnrichment())).toMatchObject({ level: 'info', virtualization_version: 'unknown' });
  });

  it('logs any module, not only virtualization', async () => {
    expect((await recordOf({ verb: 'delete', objectRef: { ...ref, name: 'cni-cilium' } })).component).toBe('cni-cilium');
  });

  it.each([
    ['stage ResponseStarted', { verb: 'patch', objectRef: ref, stage: 'ResponseStarted' }],
    ['another resource', { verb: 'patch', objectRef: { ...ref, resource: 'modules' } }],
    ['a get', { verb: 'get', objectRef: ref }],
    ['a list', { verb: 'list', objectRef: { ...ref, name: '' } }],
    ['a system user', { verb: 'patch', objectRef: ref, user: { username: 'system:serviceaccount:d8-system:deckhouse' } }],
  ])('ignores %s', async (_, event) => {
    expect(await verdict(event)).toBe('unmatched');
  });
});
