/**
 * What a user reads in a VM's status, as the original writes it: AgentReady, Migratable,
 * SizingPolicyMatched, the Running condition's NoBootableDevice and why a guest could not start
 * (the instance's Synchronized=False), a launcher pod being created or failing to mount a volume, the launcher's versions, the launcher
 * pods, phase history and migration state, and the VM's labels and annotations on its active launcher
 * pod. KubeVirt is the simulator (no launcher pods: the tests make the pods KubeVirt would).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { Condition } from '../../../shared/api/k8s/core.js';
import { CREATED_BY_LABEL, INHIBIT_NODE_SHUTDOWN_LABEL, LAUNCHER_LABEL, LAUNCHER_VALUE, VM_NAME_LABEL } from '../../../shared/api/internal/launcher.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { LAST_PROPAGATED_LABELS } from '../../../daemons/controller/reconcilers/vm/handlers/sync-metadata.js';
import { coreEvents } from '../../../daemons/controller/kube/resources.js';
import { LIBVIRT_VERSION, QEMU_VERSION } from '../../../platform/simulators/kubevirt-simulator/virt-handler/guest.js';
import { disk, makeDiskReady, vm } from './builders.js';
import { eventually, mainKube, SCOPE_LABEL, TEST_FIELD_MANAGER } from './fixtures.js';
import { PVCSchema, PVSchema, pvcDescriptor, pvDescriptor } from '../../../platform/simulators/storage-simulator/kube.js';
import { phaseIs, useWorld } from './world.js';

const t = useWorld('ctl-vmstatus');
const kube = mainKube();
afterAll(() => kube.close());

const cond = (v: VirtualMachine, type: string): Condition | undefined => v.status?.conditions?.find((c) => c.type === type);
const condIs =
  (type: string, status: string, reason: string) =>
  (v: VirtualMachine): boolean =>
    cond(v, type)?.status === status && cond(v, type)?.reason === reason;

/** A launcher pod of the VM's current instance on `node`, running, as KubeVirt and the kubelet leave it (with `extra` labels). */
async function launcherPod(vmName: string, podName: string, node: string, extra: Record<string, string> = {}): Promise<void> {
  const uid = await t.w.instanceUid(vmName);
  await t.c.pods.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName,
      namespace: t.w.ns,
      labels: { [LAUNCHER_LABEL]: LAUNCHER_VALUE, [CREATED_BY_LABEL]: uid ?? '', [VM_NAME_LABEL]: vmName, 'kept-by-kubevirt': 'yes', ...extra },
    },
    spec: { nodeName: node, containers: [{ name: 'compute', image: 'virt-launcher' }] },
  });
  await t.c.pods.patchStatus({ namespace: t.w.ns, name: podName }, { phase: 'Running' });
}

const podLabels = async (name: string): Promise<Record<string, string>> => (await t.c.pods.get({ namespace: t.w.ns, name })).metadata.labels ?? {};

describe('VM status as the original shows it', () => {
  it('a running VM shows its agent, that it can migrate, that its size fits its class, the launcher versions and when it got there', async () => {
    await t.w.createVM('web');
    const v = await t.w.vmWhen('web', (x) => phaseIs('Running')(x) && condIs('AgentReady', 'True', 'AgentReady')(x), 'Running with its agent');
    expect(cond(v, 'Running')).toMatchObject({ status: 'True', reason: 'Running' });
    expect(cond(v, 'Migratable')).toMatchObject({ status: 'True', reason: 'VirtualMachineMigratable' });
    expect(cond(v, 'SizingPolicyMatched')).toMatchObject({ status: 'True', reason: 'SizingPolicyMatched' });
    expect(v.status?.versions).toEqual({ qemu: QEMU_VERSION, libvirt: LIBVIRT_VERSION });
    const transitions = v.status?.stats?.phasesTransitions ?? [];
    expect(transitions.at(-1)?.phase).toBe('Running');
    expect(transitions.length).toBeLessThanOrEqual(5);
    expect(v.status?.stats?.lastStartTime).toBe(transitions.at(-1)?.timestamp);
    // The guest OS the agent reports, and how long after Running it answered (the original's guestOSAgentStarting).
    expect(v.status?.guestOSInfo).toMatchObject({ id: 'simulated' });
    expect(v.status?.stats?.launchTimeDuration?.guestOSAgentStarting).toMatch(/^(\d+m)?\d+s$/);
    // The Main network as the original lists it: its id and its pod interface's name (the address is status.ipAddress).
    expect(v.status?.networks).toEqual([{ id: 1, type: 'Main', name: 'default' }]);
  });

  it('lists the Main network with the id the spec gives it, and the apiserver refuses an id that is not a number', async () => {
    await t.w.createVM('mainid', { networks: [{ type: 'Main', id: 1 }] });
    await t.w.vmWhen(
      'mainid',
      (x) => JSON.stringify(x.status?.networks) === JSON.stringify([{ id: 1, type: 'Main', name: 'default' }]),
      'Main listed with id 1',
    );
    await expect(t.w.createVM('badid', { networks: [{ type: 'Main', id: 'one' as unknown as number }] })).rejects.toThrow(/spec\.networks\[0\]\.id/);
  });

  it('a VM with nothing to boot runs, and its Running condition says NoBootableDevice (and no agent answers)', async () => {
    // A blank disk: its volume (a directory, as the storage simulator keeps them) holds no disk image.
    const dir = mkdtempSync(join(tmpdir(), 'blank-disk-'));
    const pvName = `pv-blank-${t.w.scope.id}`;
    await kube.resource(pvDescriptor, PVSchema, TEST_FIELD_MANAGER).create({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: pvName, labels: { [SCOPE_LABEL]: t.w.scope.id } },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: dir } },
    });
    await kube.resource(pvcDescriptor, PVCSchema, TEST_FIELD_MANAGER).create({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'vd-blank-pvc', namespace: t.w.ns },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeName: pvName, storageClassName: '' },
    });
    await t.c.disks.create(disk(t.w.scope, 'blank'));
    await makeDiskReady(t.c, t.w.scope, 'blank');
    await t.c.vms.create(vm(t.w.scope, 'empty', t.w.className, { blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'blank' }] }));
    const v = await t.w.vmWhen('empty', condIs('Running', 'True', 'NoBootableDevice'), 'Running with NoBootableDevice');
    expect(v.status?.phase).toBe('Running');
    expect(cond(v, 'AgentReady')).toMatchObject({ status: 'False', reason: 'AgentNotReady' });
    await kube.resource(pvDescriptor, PVSchema, TEST_FIELD_MANAGER).delete({ name: pvName });
    rmSync(dir, { recursive: true, force: true });
  });

  it('a VM whose guest cannot start says why in its Running condition, and runs once it can', async () => {
    await t.w.createVM('crowd');
    await t.w.vmWhen('crowd', phaseIs('Running'), 'Running');
    const ref = { namespace: t.w.ns, name: 'crowd' };
    const others = (await t.c.kvvmis.get(ref)).status?.conditions?.filter((c) => c.type !== 'Synchronized') ?? [];
    const synchronized = (reason: string, message: string) => [...others, { type: 'Synchronized', status: 'False', reason, message }];

    // virt-controller could not create the launcher pod: the original's PodNotStarted, phase Pending.
    const quota = 'pods "virt-launcher-crowd-abcde" is forbidden: exceeded quota: compute';
    await t.c.kvvmis.mergePatch(ref, { status: { phase: 'Pending', conditions: synchronized('FailedCreate', quota) } });
    let v = await t.w.vmWhen('crowd', condIs('Running', 'False', 'PodNotStarted'), 'PodNotStarted');
    expect(v.status?.phase).toBe('Pending');
    expect(cond(v, 'Running')?.message).toBe(`Failed to start pod: Starting, Pending; FailedCreate: ${quota}`);

    // The pod runs, the node agent cannot start the guest (as refuseGuest leaves the instance): our choice, the instance's reason and message.
    const figures = 'the guest needs 2048 MiB and QEMU 256 MiB, the machine has 1024 MiB available and keeps 512 MiB';
    await t.c.kvvmis.mergePatch(ref, { status: { phase: 'Scheduled', conditions: synchronized('InsufficientHostMemory', figures) } });
    v = await t.w.vmWhen('crowd', condIs('Running', 'False', 'InsufficientHostMemory'), 'InsufficientHostMemory');
    expect(v.status?.phase).toBe('Starting');
    expect(v.status?.nodeName).toBe(t.w.nodeName);
    expect(cond(v, 'Running')?.message).toBe(figures);

    // Room again: the node agent drops the condition and the guest runs.
    await t.c.kvvmis.mergePatch(ref, { status: { conditions: others } });
    await t.w.kubevirt.run('crowd', t.w.nodeName);
    await t.w.vmWhen('crowd', (x) => phaseIs('Running')(x) && condIs('Running', 'True', 'Running')(x), 'Running again');
  });

  it("a VM whose launcher pod is being created says so, and why when a volume cannot be mounted (the pod's latest event)", async () => {
    await t.w.createVM('mounting');
    await t.w.vmWhen('mounting', phaseIs('Running'), 'Running');
    const ref = { namespace: t.w.ns, name: 'mounting' };
    const pod = 'virt-launcher-mounting-a0';
    // The instance back to Scheduled and its pod being created (no kubelet here: the test writes the pod's status).
    await t.c.kvvmis.mergePatch(ref, { status: { phase: 'Scheduled' } });
    await launcherPod('mounting', pod, t.w.nodeName);
    await t.c.pods.patchStatus(
      { namespace: t.w.ns, name: pod },
      { phase: 'Pending', containerStatuses: [{ name: 'compute', state: { waiting: { reason: 'ContainerCreating' } } }] },
    );
    let v = await t.w.vmWhen('mounting', condIs('Running', 'False', 'PodContainerCreating'), 'PodContainerCreating');
    expect(v.status?.phase).toBe('Starting');
    expect(cond(v, 'Running')?.message).toBe('Pod is in ContainerCreating phase. Check the pod for more details.');

    // The kubelet's event; nothing else changes, so the VM finds it on its own next look.
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const mount = 'MountVolume.SetUp failed for volume "vd-root" : rpc error: code = DeadlineExceeded';
    await coreEvents(kube).create({
      metadata: { namespace: t.w.ns, name: `${pod}.failedmount` },
      involvedObject: { kind: 'Pod', namespace: t.w.ns, name: pod },
      reason: 'FailedMount',
      message: mount,
      type: 'Warning',
      firstTimestamp: at,
      lastTimestamp: at,
      source: { component: 'kubelet' },
    });
    v = await t.w.vmWhen('mounting', condIs('Running', 'False', 'PodVolumeErrors'), 'PodVolumeErrors');
    expect(cond(v, 'Running')?.message).toBe(`Volume errors detected on Pod: FailedMount: ${mount}`);

    await t.c.pods.delete({ namespace: t.w.ns, name: pod });
    await t.w.kubevirt.run('mounting', t.w.nodeName);
    await t.w.vmWhen('mounting', (x) => phaseIs('Running')(x) && condIs('Running', 'True', 'Running')(x), 'Running again');
  });

  it('a VM naming a class that does not exist says VirtualMachineClassNotFound', async () => {
    await t.c.vms.create(vm(t.w.scope, 'classless', 'no-such-class', { blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: t.w.imageName }] }));
    const v = await t.w.vmWhen('classless', condIs('SizingPolicyMatched', 'False', 'VirtualMachineClassNotFound'), 'class not found');
    expect(cond(v, 'SizingPolicyMatched')?.message).toContain('"no-such-class" not found');
  });

  it('a VM whose disks KubeVirt cannot migrate says so in Migratable', async () => {
    await t.w.createVM('pinned');
    await t.w.vmWhen('pinned', condIs('Migratable', 'True', 'VirtualMachineMigratable'), 'migratable');
    const ref = { namespace: t.w.ns, name: 'pinned' };
    const vmi = await t.c.kvvmis.get(ref);
    const others = (vmi.status?.conditions ?? []).filter((c) => c.type !== 'LiveMigratable');
    await t.c.kvvmis.mergePatch(ref, {
      status: { conditions: [...others, { type: 'LiveMigratable', status: 'False', reason: 'DisksNotLiveMigratable', message: 'PVC root is not shared' }] },
    });
    const v = await t.w.vmWhen('pinned', condIs('Migratable', 'False', 'DisksNotMigratable'), 'not migratable');
    expect(cond(v, 'Migratable')?.message).toMatch(/ReadWriteMany/);
  });

  it('a finished live migration shows where the VM went from and to', async () => {
    await t.w.createVM('mover');
    await t.w.vmWhen('mover', phaseIs('Running'), 'Running');
    const at = new Date().toISOString().slice(0, 19) + 'Z';
    const migrationState = {
      startTimestamp: at,
      endTimestamp: at,
      completed: true,
      sourceNode: t.w.nodeName,
      sourcePod: 'virt-launcher-mover-aaaaa',
      targetNode: 'node-2',
      targetPod: 'virt-launcher-mover-bbbbb',
    };
    await t.c.kvvmis.mergePatch({ namespace: t.w.ns, name: 'mover' }, { status: { migrationState } });
    const v = await t.w.vmWhen('mover', (x) => x.status?.migrationState?.result === 'Succeeded', 'migration Succeeded');
    expect(v.status?.migrationState).toMatchObject({
      source: { node: t.w.nodeName, pod: 'virt-launcher-mover-aaaaa' },
      target: { node: 'node-2', pod: 'virt-launcher-mover-bbbbb' },
    });
  });

  it('lists the launcher pods, and the VM labels and annotations follow it onto the active pod and off again', async () => {
    await t.w.createVM('tagged');
    await t.w.vmWhen('tagged', phaseIs('Running'), 'Running');
    await launcherPod('tagged', 'virt-launcher-tagged-old00', 'elsewhere');
    await launcherPod('tagged', 'virt-launcher-tagged-act00', t.w.nodeName);
    await t.w.vmWhen(
      'tagged',
      (x) =>
        JSON.stringify([...(x.status?.virtualMachinePods ?? [])].sort((a, b) => a.name.localeCompare(b.name))) ===
        JSON.stringify([
          { name: 'virt-launcher-tagged-act00', active: true },
          { name: 'virt-launcher-tagged-old00', active: false },
        ]),
      'both pods listed, the one on its node active',
    );

    const ref = { namespace: t.w.ns, name: 'tagged' };
    await t.c.vms.mergePatch(ref, { metadata: { labels: { team: 'a', tier: 'web' }, annotations: { 'example.com/owner': 'ops' } } });
    await eventually(async () => (await podLabels('virt-launcher-tagged-act00'))['tier'] === 'web', 'labels on the active pod');
    const active = await t.c.pods.get({ namespace: t.w.ns, name: 'virt-launcher-tagged-act00' });
    expect(active.metadata.labels).toMatchObject({ team: 'a', tier: 'web', 'kept-by-kubevirt': 'yes', [VM_NAME_LABEL]: 'tagged' });
    expect(active.metadata.annotations?.['example.com/owner']).toBe('ops');
    expect((await podLabels('virt-launcher-tagged-old00'))['team']).toBeUndefined();

    await t.c.vms.mergePatch(ref, { metadata: { labels: { tier: null } } });
    await eventually(async () => !('tier' in (await podLabels('virt-launcher-tagged-act00'))), 'the removed label off the pod');
    expect(await podLabels('virt-launcher-tagged-act00')).toMatchObject({ team: 'a', 'kept-by-kubevirt': 'yes' });
  });

  it('rewrites an unreadable record of what was propagated and keeps propagating', async () => {
    await t.w.createVM('scribbled');
    await t.w.vmWhen('scribbled', phaseIs('Running'), 'Running');
    await launcherPod('scribbled', 'virt-launcher-scribbled-a0', t.w.nodeName);
    const ref = { namespace: t.w.ns, name: 'scribbled' };
    await t.c.kvvms.mergePatch(ref, { metadata: { annotations: { [LAST_PROPAGATED_LABELS]: '{not json' } } });
    await t.c.vms.mergePatch(ref, { metadata: { labels: { team: 'b' } } });
    await eventually(async () => (await podLabels('virt-launcher-scribbled-a0'))['team'] === 'b', 'the label on the pod');
    await eventually(async () => (await t.c.kvvms.get(ref)).metadata.annotations?.[LAST_PROPAGATED_LABELS] === '{"team":"b"}', 'the record rewritten');
  });

  it('holds its node from shutting down: the inhibitor label on the internal VM, its template, the instance and the active pod, off a pod a migration left behind', async () => {
    // A user writing the label on the VM does not change it: the module's empty value wins.
    await t.w.createVM('held');
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'held' }, { metadata: { labels: { [INHIBIT_NODE_SHUTDOWN_LABEL]: 'false' } } });
    await t.w.vmWhen('held', phaseIs('Running'), 'Running');
    const ref = { namespace: t.w.ns, name: 'held' };
    await eventually(async () => (await t.c.kvvmis.get(ref)).metadata.labels?.[INHIBIT_NODE_SHUTDOWN_LABEL] === '', 'the label on the instance');
    const kvvm = await t.c.kvvms.get(ref);
    expect(kvvm.metadata.labels?.[INHIBIT_NODE_SHUTDOWN_LABEL]).toBe('');
    expect(kvvm.spec.template.metadata?.labels?.[INHIBIT_NODE_SHUTDOWN_LABEL]).toBe('');

    // The source pod of a finished migration still carries it; the target is the active one now.
    await launcherPod('held', 'virt-launcher-held-src00', 'elsewhere', { [INHIBIT_NODE_SHUTDOWN_LABEL]: '' });
    await launcherPod('held', 'virt-launcher-held-dst00', t.w.nodeName);
    await eventually(async () => (await podLabels('virt-launcher-held-dst00'))[INHIBIT_NODE_SHUTDOWN_LABEL] === '', 'the label on the active pod');
    const at = new Date().toISOString().slice(0, 19) + 'Z';
    const migrationState = {
      startTimestamp: at,
      endTimestamp: at,
      completed: true,
      sourceNode: 'elsewhere',
      sourcePod: 'virt-launcher-held-src00',
      targetNode: t.w.nodeName,
      targetPod: 'virt-launcher-held-dst00',
    };
    await t.c.kvvmis.mergePatch(ref, { status: { migrationState } });
    await eventually(async () => !(INHIBIT_NODE_SHUTDOWN_LABEL in (await podLabels('virt-launcher-held-src00'))), 'the label off the pod left behind');
    expect((await podLabels('virt-launcher-held-dst00'))[INHIBIT_NODE_SHUTDOWN_LABEL]).toBe('');

    // Taken off the active pod by hand: put back. Nothing of this awaits a restart.
    await t.c.pods.mergePatch({ namespace: t.w.ns, name: 'virt-launcher-held-dst00' }, { metadata: { labels: { [INHIBIT_NODE_SHUTDOWN_LABEL]: null } } });
    await eventually(async () => (await podLabels('virt-launcher-held-dst00'))[INHIBIT_NODE_SHUTDOWN_LABEL] === '', 'the label back on the active pod');
    const v = await t.c.vms.get(ref);
    expect(v.status?.restartAwaitingChanges ?? []).toEqual([]);
  });
});
