import { describe, expect, it } from '@jest/globals';
import { FakeEnrichment } from '../testing/fake-enrichment.js';
import { recordOf, verdict } from '../testing/run.js';
import { worldObjects } from '../testing/world.js';

const vmopRef = { resource: 'virtualmachineoperations', namespace: 'ns1', apiGroup: 'virtualization.deckhouse.io' };
const vmop = (type: string, name = 'op-1'): Record<string, unknown> => ({
  kind: 'VirtualMachineOperation',
  metadata: { name, namespace: 'ns1' },
  spec: { type, virtualMachineName: 'vm1' },
});
const create = (responseObject: unknown): Parameters<typeof verdict>[0] => ({
  verb: 'create',
  level: 'RequestResponse',
  objectRef: vmopRef,
  responseObject,
});

describe('Control VM by operation', () => {
  it.each([
    ['Start', 'info', 'start', 'started'],
    ['Stop', 'warn', 'stop', 'stopped'],
    ['Restart', 'warn', 'restart', 'restarted'],
    ['Migrate', 'warn', 'migrate', 'migrated'],
    ['Evict', 'warn', 'evict', 'evicted'],
  ])('a %s operation is logged at %s with action %s', async (type, level, action, past) => {
    expect(await recordOf(create(vmop(type)))).toMatchObject({
      type: 'Control VM',
      level,
      action_type: action,
      name: `Virtual machine 'vm1' has been ${past} by 'jane'`,
    });
  });

  it.each([
    ['a level below RequestResponse', { ...create(vmop('Stop')), level: 'Metadata' }],
    ['another resource', { ...create(vmop('Stop')), objectRef: { ...vmopRef, resource: 'virtualmachines' } }],
    ['a verb other than create', { ...create(vmop('Stop')), verb: 'delete' }],
    ['a system user', { ...create(vmop('Stop')), user: { username: 'system:serviceaccount:ns1:bot' } }],
  ])('ignores %s', async (_, event) => {
    expect(await verdict(event)).not.toMatch(/vmop-control/);
  });

  it('prefers the operation known to the informer over the response object', async () => {
    const world = new FakeEnrichment({
      ...worldObjects(),
      vmops: [{ metadata: { name: 'op-1', namespace: 'ns1' }, spec: { type: 'Start', virtualMachineName: 'vm1' } }],
    });
    expect((await recordOf(create({ metadata: { name: 'op-1' } }), world)).action_type).toBe('start');
  });

  it('still logs, with unknown VM details, when the VM is not known', async () => {
    const record = await recordOf(create(vmop('Stop')), new FakeEnrichment());
    expect(record).toMatchObject({ action_type: 'stop', virtualmachine_uid: 'unknown', virtualmachine_os: 'unknown' });
  });

  it('cannot decide when the response is a failure Status and the operation is not known', async () => {
    expect(await verdict(create({ kind: 'Status', status: 'Failure', code: 422 }))).toBe('undecidable:vmop-control');
  });

  it.each([
    ['Restore', 'restore', "Virtual machine 'vm1' has been restored by 'jane'"],
    ['Clone', 'clone', "Virtual machine 'vm1' has been cloned by 'jane'"],
    ['constructor', 'constructor', "Virtual machine 'vm1' has been constructored by 'jane'"],
  ])('reports a %s operation, which the original had no sentence for, at warn', async (type, action, name) => {
    expect(await recordOf(create(vmop(type)))).toMatchObject({ level: 'warn', action_type: action, name });
  });

  it('cannot decide when the operation names no type or no VM', async () => {
    expect(await verdict(create({ ...vmop(''), spec: { type: '', virtualMachineName: 'vm1' } }))).toBe('undecidable:vmop-control');
    expect(await verdict(create({ ...vmop('Stop'), spec: { type: 'Stop' } }))).toBe('undecidable:vmop-control');
  });
});

describe('Access to VM', () => {
  const ref = { resource: 'virtualmachines', namespace: 'ns1', name: 'vm1', apiGroup: 'subresources.virtualization.deckhouse.io' };
  const access = (subresource: string, stage = 'ResponseComplete'): Parameters<typeof verdict>[0] => ({
    verb: 'get',
    stage,
    objectRef: { ...ref, subresource },
  });

  it.each([
    ['console', 'ResponseComplete', "Virtual machine 'vm1' connection has been finished via console by 'jane'"],
    ['vnc', 'ResponseComplete', "Virtual machine 'vm1' connection has been finished via vnc by 'jane'"],
    ['portforward', 'RequestReceived', "Virtual machine 'vm1' connection has been initiated via portforward by 'jane'"],
  ])('a %s connection at %s gets its sentence', async (subresource, stage, name) => {
    expect(await recordOf(access(subresource, stage))).toMatchObject({ type: 'Access to VM', level: 'info', name });
  });

  it('reports an unknown result for a connection just initiated, which has no decision yet', async () => {
    expect((await recordOf({ ...access('console', 'RequestReceived'), annotations: {} })).operation_result).toBe('unknown');
  });

  it.each([
    ['no objectRef', { ...access('console'), objectRef: undefined }],
    ['a verb other than get', { ...access('console'), verb: 'create' }],
    ['another resource', { ...access('console'), objectRef: { ...ref, resource: 'virtualdisks', subresource: 'console' } }],
    ['the main API group', { ...access('console'), objectRef: { ...ref, apiGroup: 'virtualization.deckhouse.io', subresource: 'console' } }],
    ['another subresource', access('freeze')],
    ['stage ResponseStarted', access('vnc', 'ResponseStarted')],
    ['a system user', { ...access('vnc'), user: { username: 'system:admin' } }],
  ])('ignores %s', async (_, event) => {
    expect(await verdict(event)).toBe('unmatched');
  });

  it('still logs, naming the VM from the request, when the VM is not known', async () => {
    const record = await recordOf(access('vnc'), new FakeEnrichment());
    expect(record).toMatchObject({ name: "Virtual machine 'vm1' connection has been finished via vnc by 'jane'", virtual_machine_name: 'unknown' });
  });
});
