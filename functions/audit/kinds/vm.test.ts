import { describe, expect, it } from '@jest/globals';
import type { PodView, VMView } from '../enrichment.js';
import { FakeEnrichment } from '../testing/fake-enrichment.js';
import { recordOf, verdict } from '../testing/run.js';
import { goldenWorld, worldObjects } from '../testing/world.js';

const VMS = '/apis/virtualization.deckhouse.io/v1alpha2/namespaces/ns1/virtualmachines';
const vmRef = { resource: 'virtualmachines', namespace: 'ns1', name: 'vm1', apiGroup: 'virtualization.deckhouse.io' };
const manage = (verb: string, requestURI = `${VMS}/vm1`): Parameters<typeof verdict>[0] => ({ verb, requestURI, objectRef: vmRef });
const empty = new FakeEnrichment();

describe('Manage VM', () => {
  it.each([
    ['create', VMS, 'info', "Virtual machine 'vm1' has been created by 'jane'"],
    ['update', `${VMS}/vm1`, 'info', "Virtual machine 'vm1' has been updated by 'jane'"],
    ['patch', `${VMS}/vm1?fieldManager=kubectl`, 'info', "Virtual machine 'vm1' has been updated by 'jane'"],
    ['delete', `${VMS}/vm1`, 'warn', "Virtual machine 'vm1' has been deleted by 'jane'"],
  ])('a %s through the resource path is logged at %s', async (verb, uri, level, name) => {
    expect(await recordOf(manage(verb, uri))).toMatchObject({ type: 'Manage VM', level, name, action_type: verb });
  });

  it.each([
    ['no objectRef', { ...manage('delete'), objectRef: undefined }],
    ['stage ResponseStarted', { ...manage('delete'), stage: 'ResponseStarted' }],
    ['another resource', { ...manage('delete'), objectRef: { ...vmRef, resource: 'virtualdisks' } }],
    ['a malformed URI', manage('delete', `\u0006${VMS}/vm1`)],
    ['a broken percent escape', manage('delete', `${VMS}/vm%zz`)],
    ['a subresource path', manage('update', `${VMS}/vm1/status`)],
    ['another API version', manage('delete', '/apis/virtualization.deckhouse.io/v1alpha3/namespaces/ns1/virtualmachines/vm1')],
    ['a get', manage('get')],
    ['a list', manage('list', VMS)],
    ['a system user', { ...manage('delete'), user: { username: 'system:serviceaccount:kube-system:gc' } }],
  ])('ignores %s', async (_, event) => {
    expect(await verdict(event)).not.toBe('record:vm-manage');
  });

  it('logs the module service accounts although they are system users', async () => {
    const record = await recordOf({ ...manage('delete'), user: { username: 'system:serviceaccount:d8-service-accounts:ci' } });
    expect(record.type).toBe('Manage VM');
  });

  it('names a VM created through generateName after the response object', async () => {
    const record = await recordOf({
      ...manage('create', VMS),
      objectRef: { ...vmRef, name: '' },
      responseObject: { metadata: { name: 'vm-x9' } },
    });
    expect(record.name).toBe("Virtual machine 'vm-x9' has been created by 'jane'");
  });

  it('still logs, with unknown details, when neither the VM nor its disks and node are known', async () => {
    const record = await recordOf(manage('create', VMS), empty);
    expect(record).toMatchObject({ virtualmachine_uid: 'unknown', storageclasses: 'unknown', node_network_address: 'unknown' });
  });

  it('leaves storage classes unknown when one disk is missing, but keeps the other VM details', async () => {
    const objects = worldObjects();
    const record = await recordOf(manage('update'), new FakeEnrichment({ ...objects, vds: objects.vds?.slice(1), nodes: [] }));
    expect(record).toMatchObject({ storageclasses: 'unknown', node_network_address: 'unknown', virtualmachine_os: 'Ubuntu 24.04 LTS' });
  });

  it('writes empty qemu and libvirt versions, as the original does, for a known VM that reports none', async () => {
    const objects = worldObjects();
    const vm = structuredClone(objects.vms?.[0]) as VMView;
    if (vm.status === undefined) throw new Error('the world VM has no status');
    delete vm.status.versions;
    const record = await recordOf(manage('update'), new FakeEnrichment({ ...objects, vms: [vm] }));
    expect(record).toMatchObject({ qemu_version: '', libvirt_version: '', virtualmachine_uid: vm.metadata?.uid });
  });
});

describe('Control VM by pod deletion', () => {
  const podRef = { resource: 'pods', namespace: 'ns1', name: 'virt-launcher-vm1-x7k2p' };
  const del = (username: string, world = goldenWorld()): Promise<string> => verdict({ verb: 'delete', objectRef: podRef, user: { username } }, world);
  const controller = 'system:serviceaccount:d8-virtualization:virtualization-controller';
  const withMessage = (message: string): FakeEnrichment => {
    const objects = worldObjects();
    const pod = structuredClone(objects.pods?.[0]) as PodView;
    const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
    if (terminated === undefined) throw new Error('the world pod has no terminated compute container');
    terminated.message = message;
    return new FakeEnrichment({ ...objects, pods: [pod] });
  };

  it.each([
    ['another resource', { verb: 'delete', objectRef: { ...podRef, resource: 'services' } }],
    ['a pod that is not a launcher', { verb: 'delete', objectRef: { ...podRef, name: 'web-0' } }],
    ['a verb other than delete', { verb: 'patch', objectRef: podRef }],
    ['stage RequestReceived', { verb: 'delete', objectRef: podRef, stage: 'RequestReceived' }],
  ])('ignores %s', async (_, event) => {
    expect(await verdict(event)).not.toMatch(/vm-control/);
  });

  it('reports the guest powering itself off as stopped from OS', async () => {
    expect((await recordOf({ verb: 'delete', objectRef: podRef, user: { username: controller } })).name).toBe("Virtual machine 'vm1' has been stopped from OS");
  });

  it("names the VM from the launcher pod's label as real virt-controller writes it, not from the pod name", async () => {
    const objects = worldObjects();
    const pod = structuredClone(objects.pods?.[0]) as PodView;
    // KubeVirt cuts long VM names in the pod name: only the label names the VM.
    const name = 'virt-launcher-vm1-cut-x7k2p';
    if (pod.metadata === undefined) throw new Error('the world pod has no metadata');
    pod.metadata.name = name;
    const record = await recordOf(
      { verb: 'delete', objectRef: { ...podRef, name }, user: { username: controller } },
      new FakeEnrichment({ ...objects, pods: [pod] }),
    );
    expect(record.name).toBe("Virtual machine 'vm1' has been stopped from OS");
  });

  it('reports a guest reset as restarted from OS', async () => {
    const record = await recordOf({ verb: 'delete', objectRef: podRef, user: { username: controller } }, withMessage('guest-reset'));
    expect(record).toMatchObject({ level: 'warn', name: "Virtual machine 'vm1' has been restarted from OS" });
  });

  it('does not log the controller deleting a pod for any other reason', async () => {
    expect(await del(controller, withMessage('poped'))).toBe('not_logged:vm-control');
  });

  it('does not log a node deleting the pod', async () => {
    expect(await del('system:node:node-1')).toBe('not_logged:vm-control');
  });

  it('cannot decide for the controller when the pod was never seen', async () => {
    expect(await del(controller, empty)).toBe('undecidable:vm-control');
  });

  it('reports a user deleting an unknown pod as a kill, naming the VM after the pod', async () => {
    const record = await recordOf({ verb: 'delete', objectRef: podRef }, empty);
    expect(record).toMatchObject({ level: 'critical', name: "Virtual machine 'vm1' has been killed abnormal way by 'jane'" });
  });
});
