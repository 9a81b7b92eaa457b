/**
 * Disk snapshots against the real apiserver: the controller's storage and snapshot reconcilers, PVCs
 * bound by kube-controller-manager to the storage simulator's PersistentVolumes, VolumeSnapshots taken by the
 * SimulatedSnapshotController (no CSI driver here), KubeVirt played by the simulator.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Finalizer } from '../../../../shared/api/finalizers.js';
import {
  VolumeSnapshotClassSchema,
  VolumeSnapshotSchema,
  volumeSnapshotClassDescriptor,
  volumeSnapshotDescriptor,
  type VolumeSnapshot,
} from '../../../../shared/api/k8s/volume-snapshot.js';
import { API_VERSION } from '../../../../shared/api/resources/common.js';
import type { VirtualDiskSnapshot, VirtualMachineSnapshot, VirtualMachineSnapshotOperation } from '../../../../shared/api/resources/snapshots.js';
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import { removeFinalizer, type KubeClient, type ResourceClient } from '../../../../shared/kube/index.js';
import { startController, type RunningController } from '../../../../daemons/controller/controller.js';
import type { Clients } from '../../../../daemons/controller/kube/resources.js';
import { makeStorageClients, type StorageClients } from '../../../../daemons/controller/reconcilers/provisioning/kube.js';
import { makeSnapshotClients, type SnapshotClients } from '../../../../daemons/controller/reconcilers/snapshot/deps.js';
import { KubeVirtSimulator } from '../../../../platform/simulators/kubevirt-simulator/simulator.js';
import { freshNamespace } from '../../../env/index.js';
import { node, vm, vmClass, vmop } from '../builders.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import {
  SCOPE_LABEL,
  TEST_FIELD_MANAGER,
  controllerConfig,
  eventually,
  gone,
  mainKube,
  newScope,
  phaseIs,
  readWhen,
  testClients,
  type Scope,
} from '../fixtures.js';
import { StorageSimulator } from '../../../../platform/simulators/storage-simulator/simulator.js';
import { SimulatedSnapshotController } from './snapshot-controller-simulated.js';
import { GuestFreezeFake } from './guest-freeze-fake.js';

jest.setTimeout(180_000);

const DRIVER = 'kubernetes.io/no-provisioner';
let kube: KubeClient;
let c: Clients;
let sc: StorageClients;
let snap: SnapshotClients;
let scope: Scope;
let ns: string;
let player: StorageSimulator;
let volumesDir: string;
let snapshotter: SimulatedSnapshotController;
let ctl: { running: RunningController; abort: AbortController };
let kubevirt: KubeVirtSimulator;
let storageClass: string;
let otherClass: string;
let snapshotClass: string;
let className: string;
let freeze: GuestFreezeFake;
/** For each VolumeSnapshot taken: whether the VM named in its FROZEN_VM annotation (or its VDS's) was frozen at that instant. */
const frozenAtTake = new Map<string, boolean>();

beforeAll(async () => {
  kube = mainKube();
  c = testClients(kube);
  sc = makeStorageClients(kube, TEST_FIELD_MANAGER);
  snap = makeSnapshotClients(kube, TEST_FIELD_MANAGER);
  scope = newScope(await freshNamespace('snapshots'));
  ns = scope.namespace;
  storageClass = `snap-${scope.id}`;
  otherClass = `snap-other-${scope.id}`;
  snapshotClass = `snap-${scope.id}`;
  for (const [name, provisioner] of [
    [storageClass, DRIVER],
    [otherClass, 'example.com/no-snapshots'],
  ] as const) {
    await sc.storageClasses.create({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name, labels: { [SCOPE_LABEL]: scope.id } },
      provisioner,
      volumeBindingMode: 'Immediate',
    });
  }
  await kube.resource(volumeSnapshotClassDescriptor, VolumeSnapshotClassSchema, TEST_FIELD_MANAGER).create({
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshotClass',
    metadata: { name: snapshotClass, annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } },
    driver: DRIVER,
    deletionPolicy: 'Delete',
  });
  volumesDir = mkdtempSync(join(tmpdir(), 'snapshots-volumes-'));
  player = new StorageSimulator(kube, { volumesDir, storageClasses: [storageClass], namespace: ns, requireNode: false });
  await player.start();
  freeze = new GuestFreezeFake();
  snapshotter = new SimulatedSnapshotController(kube, sc, ns, (vs) => {
    frozenAtTake.set(
      vs.metadata.name ?? '',
      [...freeze.calls.map((x) => x.vm)].some((vmName) => freeze.isFrozen(ns, vmName)),
    );
  });
  snapshotter.start();
  const abort = new AbortController();
  const config = controllerConfig(scope, { STORAGE_RECONCILERS: 'true', POD_NAMESPACE: ns, DEPENDENCY_RECHECK_INTERVAL: '1s' });
  ctl = { running: await startController({ kube, config, signal: abort.signal, filesystems: freeze }), abort };
  kubevirt = new KubeVirtSimulator(kube, { namespace: ns, autoRunOn: `node-1-${scope.id}` });
  await kubevirt.start();
  await c.nodes.create(node(scope, 'node-1'));
  className = (await c.classes.create(vmClass(scope, 'generic'))).metadata.name ?? '';
});

afterAll(async () => {
  await kubevirt.stop();
  ctl.abort.abort();
  await ctl.running.stop();
  await snapshotter.stop();
  await player.stop();
  rmSync(volumesDir, { recursive: true, force: true });
  await kube
    .resource(volumeSnapshotClassDescriptor, VolumeSnapshotClassSchema, TEST_FIELD_MANAGER)
    .delete({ name: snapshotClass })
    .catch(() => undefined);
  for (const name of [storageClass, otherClass]) await sc.storageClasses.delete({ name }).catch(() => undefined);
  kube.close();
});

function blankDisk(name: string, className = storageClass): VirtualDisk {
  return {
    apiVersion: API_VERSION,
    kind: 'VirtualDisk',
    metadata: { name, namespace: ns },
    spec: { persistentVolumeClaim: { size: '1Gi', storageClassName: className } },
  };
}

function vdSnapshot(name: string, disk: string, requiredConsistency = true): VirtualDiskSnapshot {
  return { apiVersion: API_VERSION, kind: 'VirtualDiskSnapshot', metadata: { name, namespace: ns }, spec: { virtualDiskName: disk, requiredConsistency } };
}

async function diskReady(name: string): Promise<VirtualDisk> {
  return readWhen(() => c.disks.get({ namespace: ns, name }), phaseIs('Ready'), `disk ${name} Ready`);
}

async function snapshotIn(name: string, phase: string): Promise<VirtualDiskSnapshot> {
  return readWhen(() => snap.vdSnapshots.get({ namespace: ns, name }), phaseIs(phase), `snapshot ${name} ${phase}`);
}

/**
 * KubeVirt reports the guest agent connected (the simulator's hand-run instances have none; the
 * instance's status is written with the object).
 */
async function agentConnects(vmName: string): Promise<void> {
  await c.kvvmis.mergePatch(
    { namespace: ns, name: vmName },
    {
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'AgentConnected', status: 'True' },
        ],
      },
    },
  );
}

const condition = (o: VirtualDiskSnapshot, type: string): unknown => o.status?.conditions?.find((x) => x.type === type);
const volumeSnapshots = (): ResourceClient<VolumeSnapshot> => kube.resource(volumeSnapshotDescriptor, VolumeSnapshotSchema, TEST_FIELD_MANAGER);

describe('VirtualDiskSnapshot', () => {
  it('a snapshot of a Ready disk reaches Ready through a VolumeSnapshot of its PVC, and its deletion removes that', async () => {
    await c.disks.create(blankDisk('data'));
    const vd = await diskReady('data');
    const created = await snap.vdSnapshots.create(vdSnapshot('data-1', 'data'));
    const got = await snapshotIn('data-1', 'Ready');
    expect(got.status?.consistent).toBe(true);
    expect(got.metadata.finalizers).toContain(Finalizer.vdSnapshotCleanup);
    expect(condition(got, 'VirtualDiskReady')).toMatchObject({ status: 'True', reason: 'VirtualDiskReady' });
    expect(condition(got, 'VirtualDiskSnapshotReady')).toMatchObject({ status: 'True', reason: 'VirtualDiskSnapshotReady' });
    const vsName = got.status?.volumeSnapshotName ?? '';
    expect(vsName).toMatch(/^vds-data-1-/);
    const vs = await volumeSnapshots().get({ namespace: ns, name: vsName });
    expect(vs.spec.source.persistentVolumeClaimName).toBe(vd.status?.target?.persistentVolumeClaimName);
    expect(vs.metadata.finalizers).toEqual([Finalizer.vdSnapshotProtection]);
    expect(vs.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'VirtualDiskSnapshot', uid: created.metadata.uid, controller: true })]);
    expect(vs.status).toMatchObject({ readyToUse: true, restoreSize: '1Gi' });

    await snap.vdSnapshots.delete({ namespace: ns, name: 'data-1' });
    await eventually(() => gone(() => snap.vdSnapshots.get({ namespace: ns, name: 'data-1' })), 'snapshot gone');
    await eventually(() => gone(() => volumeSnapshots().get({ namespace: ns, name: vsName })), 'VolumeSnapshot garbage-collected');
  });

  it('fails, naming the cause, for a missing disk, a disk that is not Ready, and a driver without a snapshot class', async () => {
    await c.disks.create(blankDisk('no-class', `missing-${scope.id}`));
    await c.disks.create(blankDisk('other', otherClass));
    // The user snapshots a disk they see Pending (its class does not exist).
    await eventually(async () => (await c.disks.get({ namespace: ns, name: 'no-class' })).status?.phase === 'Pending', 'disk no-class Pending');
    await snap.vdSnapshots.create(vdSnapshot('ghost-1', 'ghost'));
    await snap.vdSnapshots.create(vdSnapshot('pending-1', 'no-class'));
    const ghost = await snapshotIn('ghost-1', 'Failed');
    expect(condition(ghost, 'VirtualDiskReady')).toMatchObject({ status: 'False', reason: 'VirtualDiskNotReadyForSnapshotting' });
    expect(condition(ghost, 'VirtualDiskSnapshotReady')).toMatchObject({
      status: 'False',
      reason: 'VirtualDiskSnapshotFailed',
      message: `VirtualDisk ghost does not exist in namespace ${ns}`,
    });
    const pending = await snapshotIn('pending-1', 'Failed');
    expect(condition(pending, 'VirtualDiskSnapshotReady')).toMatchObject({
      message: 'VirtualDisk no-class is not Ready (phase Pending): only a Ready disk can be snapshotted',
    });
    expect(pending.status?.volumeSnapshotName).toBeUndefined();

    // Its own class, provisioned for this disk only (the main simulator provisions only the main class).
    const other = await eventually(async () => (await c.disks.get({ namespace: ns, name: 'other' })).status?.target?.persistentVolumeClaimName, 'PVC of other');
    const helper = new StorageSimulator(kube, { volumesDir: join(volumesDir, 'other'), storageClasses: [otherClass], namespace: ns, requireNode: false });
    await helper.start();
    try {
      await diskReady('other');
    } finally {
      await helper.stop();
    }
    await snap.vdSnapshots.create(vdSnapshot('other-1', 'other'));
    const noClass = await snapshotIn('other-1', 'Failed');
    expect(condition(noClass, 'VirtualDiskSnapshotReady')).toMatchObject({
      reason: 'VirtualDiskSnapshotFailed',
      message: expect.stringMatching(/^VolumeSnapshot vds-other-1-\S+ failed: cannot find default snapshot class for driver example.com\/no-snapshots$/),
    });
    expect(other).toMatch(/^vd-other-/);
    // Failed is final: no second VolumeSnapshot, the failed one stays for inspection.
    expect((await volumeSnapshots().list({ namespace: ns })).items.filter((v) => v.metadata.name?.startsWith('vds-other-1-'))).toHaveLength(1);
  });

  it('a snapshot whose VolumeSnapshot vanishes is Failed with reason Lost', async () => {
    await c.disks.create(blankDisk('lost'));
    await diskReady('lost');
    await snap.vdSnapshots.create(vdSnapshot('lost-1', 'lost'));
    const ready = await snapshotIn('lost-1', 'Ready');
    const vs = await volumeSnapshots().get({ namespace: ns, name: ready.status?.volumeSnapshotName ?? '' });
    await removeFinalizer(volumeSnapshots(), vs, Finalizer.vdSnapshotProtection);
    await volumeSnapshots().delete({ namespace: ns, name: vs.metadata.name ?? '' });
    const lost = await snapshotIn('lost-1', 'Failed');
    expect(condition(lost, 'VirtualDiskSnapshotReady')).toMatchObject({
      status: 'False',
      reason: 'Lost',
      message: `VolumeSnapshot ${vs.metadata.name ?? ''} is gone: the snapshot's data is lost`,
    });
  });

  it('a disk in use by a running VM: inconsistent without requiredConsistency, waiting without a guest agent, frozen once it connects; a stopped VM needs no freeze', async () => {
    await c.disks.create(blankDisk('root'));
    await diskReady('root');
    await c.vms.create(vm(scope, 'guest', className, { blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'root' }] }));
    await eventually(async () => (await c.vms.get({ namespace: ns, name: 'guest' })).status?.phase === 'Running', 'VM Running');
    await eventually(
      async () => (await c.disks.get({ namespace: ns, name: 'root' })).status?.attachedToVirtualMachines?.some((u) => u.name === 'guest'),
      'disk shows the VM',
    );

    await snap.vdSnapshots.create(vdSnapshot('root-now', 'root', false));
    const now = await snapshotIn('root-now', 'Ready');
    expect(now.status?.consistent).toBe(false);
    expect(condition(now, 'VirtualDiskSnapshotReady')).toMatchObject({ status: 'True', message: expect.stringMatching(/potentially inconsistent/) });
    expect(freeze.of('guest')).toEqual([]);

    // No guest agent: it cannot be frozen, the snapshot waits.
    await snap.vdSnapshots.create(vdSnapshot('root-consistent', 'root'));
    const waiting = await snapshotIn('root-consistent', 'InProgress');
    expect(condition(waiting, 'VirtualDiskSnapshotReady')).toMatchObject({
      status: 'False',
      reason: 'PotentiallyInconsistent',
      message: expect.stringMatching(/in use by the running VirtualMachine guest whose guest agent is not connected/),
    });
    expect(waiting.status?.volumeSnapshotName).toBeUndefined();

    // The agent connects: frozen, taken, thawed.
    await agentConnects('guest');
    const frozen = await snapshotIn('root-consistent', 'Ready');
    expect(frozen.status?.consistent).toBe(true);
    expect(freeze.of('guest')).toEqual(['freeze', 'unfreeze']);
    expect(frozenAtTake.get(frozen.status?.volumeSnapshotName ?? '')).toBe(true);
    expect(freeze.isFrozen(ns, 'guest')).toBe(false);

    // A stopped VM needs no freeze.
    await c.vms.mergePatch({ namespace: ns, name: 'guest' }, { spec: { runPolicy: 'AlwaysOff' } });
    await eventually(async () => gone(() => c.kvvmis.get({ namespace: ns, name: 'guest' })), 'instance gone');
    await snap.vdSnapshots.create(vdSnapshot('root-stopped', 'root'));
    const stopped = await snapshotIn('root-stopped', 'Ready');
    expect(stopped.status?.consistent).toBe(true);
    expect(freeze.of('guest')).toEqual(['freeze', 'unfreeze']);
  });

  it('two snapshots of one running VM: the first done leaves it frozen for the other, the last one thaws it', async () => {
    for (const d of ['pair-a', 'pair-b']) await c.disks.create(blankDisk(d));
    for (const d of ['pair-a', 'pair-b']) await diskReady(d);
    const blockDeviceRefs = [
      { kind: 'VirtualDisk' as const, name: 'pair-a' },
      { kind: 'VirtualDisk' as const, name: 'pair-b' },
    ];
    await c.vms.create(vm(scope, 'pair', className, { blockDeviceRefs }));
    await eventually(async () => (await c.vms.get({ namespace: ns, name: 'pair' })).status?.phase === 'Running', 'VM Running');
    await eventually(
      async () => (await c.disks.get({ namespace: ns, name: 'pair-b' })).status?.attachedToVirtualMachines?.some((u) => u.name === 'pair'),
      'disk shows the VM',
    );
    await agentConnects('pair');
    snapshotter.hold('vds-pair-b-1-');
    try {
      await snap.vdSnapshots.create(vdSnapshot('pair-b-1', 'pair-b'));
      await eventually(async () => (await snap.vdSnapshots.get({ namespace: ns, name: 'pair-b-1' })).status?.volumeSnapshotName, 'second snapshot asked for');
      await snap.vdSnapshots.create(vdSnapshot('pair-a-1', 'pair-a'));
      await snapshotIn('pair-a-1', 'Ready');
      expect(freeze.of('pair')).toEqual(['freeze', 'freeze']);
      expect(freeze.isFrozen(ns, 'pair')).toBe(true);
    } finally {
      snapshotter.release('vds-pair-b-1-');
    }
    const last = await snapshotIn('pair-b-1', 'Ready');
    expect(last.status?.consistent).toBe(true);
    expect(freeze.of('pair')).toEqual(['freeze', 'freeze', 'unfreeze']);
    expect(freeze.isFrozen(ns, 'pair')).toBe(false);
  });
});

describe('a VirtualDisk from a VirtualDiskSnapshot', () => {
  const fromSnapshot = (name: string, snapshot: string, size?: string): VirtualDisk => ({
    apiVersion: API_VERSION,
    kind: 'VirtualDisk',
    metadata: { name, namespace: ns },
    spec: {
      dataSource: { type: 'ObjectRef', objectRef: { kind: 'VirtualDiskSnapshot', name: snapshot } },
      persistentVolumeClaim: { storageClassName: storageClass, ...(size !== undefined ? { size } : {}) },
    },
  });

  it('is Ready on a claim filled from the VolumeSnapshot, at its restore size', async () => {
    await c.disks.create(blankDisk('orig'));
    await diskReady('orig');
    const vds = await snap.vdSnapshots.create(vdSnapshot('orig-1', 'orig'));
    const taken = await snapshotIn('orig-1', 'Ready');
    await c.disks.create(fromSnapshot('restored', 'orig-1'));
    const vd = await diskReady('restored');
    expect(vd.status).toMatchObject({ capacity: '1Gi', sourceUID: vds.metadata.uid });
    expect(vd.status?.conditions?.find((x) => x.type === 'DatasourceReady')).toMatchObject({ status: 'True' });
    const pvc = await sc.pvcs.get({ namespace: ns, name: vd.status?.target?.persistentVolumeClaimName ?? '' });
    expect(pvc.spec.dataSource).toEqual({ apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: taken.status?.volumeSnapshotName });
    expect(pvc.spec.resources?.requests?.['storage']).toBe('1Gi');
  });

  it('waits Pending for a snapshot that does not exist yet, and fails when asked smaller than the restore size', async () => {
    await c.disks.create(fromSnapshot('early', 'later-1'));
    const early = await readWhen(() => c.disks.get({ namespace: ns, name: 'early' }), phaseIs('Pending'), 'disk Pending');
    expect(early.status?.conditions?.find((x) => x.type === 'DatasourceReady')).toMatchObject({
      status: 'False',
      reason: 'VirtualDiskSnapshot',
      message: `VirtualDiskSnapshot ${ns}/later-1 does not exist`,
    });
    expect(early.status?.conditions?.find((x) => x.type === 'Ready')).toMatchObject({ reason: 'DatasourceIsNotFound' });
    // The snapshot appears: the waiting disk goes on by itself.
    await c.disks.create(blankDisk('later'));
    await diskReady('later');
    await snap.vdSnapshots.create(vdSnapshot('later-1', 'later'));
    await diskReady('early');

    await c.disks.create(fromSnapshot('small', 'later-1', '512Mi'));
    const small = await readWhen(() => c.disks.get({ namespace: ns, name: 'small' }), phaseIs('Failed'), 'disk Failed');
    expect(small.status?.conditions?.find((x) => x.type === 'Ready')?.message).toBe(
      "the specified pvc size is insufficient: 512Mi is less than the snapshot's restore size 1Gi",
    );
  });
});

describe('VirtualMachineSnapshot', () => {
  const vmSnapshot = (name: string, vmName: string, requiredConsistency = true): VirtualMachineSnapshot => ({
    apiVersion: API_VERSION,
    kind: 'VirtualMachineSnapshot',
    metadata: { name, namespace: ns },
    spec: { virtualMachineName: vmName, keepIPAddress: 'Always', requiredConsistency },
  });
  const vmSnapshotIn = (name: string, phase: string): Promise<VirtualMachineSnapshot> =>
    readWhen(() => snap.vmSnapshots.get({ namespace: ns, name }), phaseIs(phase), `VM snapshot ${name} ${phase}`);
  const ready = (o: VirtualMachineSnapshot): unknown => o.status?.conditions?.find((x) => x.type === 'VirtualMachineSnapshotReady');

  it('a stopped VM: one Ready disk snapshot per disk and a Secret with its spec; Ready, consistent; deleting it removes them', async () => {
    for (const d of ['sys', 'logs']) await c.disks.create(blankDisk(d));
    for (const d of ['sys', 'logs']) await diskReady(d);
    const spec = {
      runPolicy: 'AlwaysOff' as const,
      blockDeviceRefs: [
        { kind: 'VirtualDisk' as const, name: 'sys' },
        { kind: 'VirtualDisk' as const, name: 'logs' },
      ],
    };
    await c.vms.create(vm(scope, 'cold', className, spec));
    await eventually(async () => (await c.vms.get({ namespace: ns, name: 'cold' })).status?.phase === 'Stopped', 'VM Stopped');
    const created = await snap.vmSnapshots.create(vmSnapshot('cold-1', 'cold'));
    const got = await vmSnapshotIn('cold-1', 'Ready');
    expect(got.status).toMatchObject({ consistent: true, virtualDiskSnapshotNames: ['cold-1-sys', 'cold-1-logs'] });
    expect(got.status?.resources).toEqual(
      expect.arrayContaining([
        { apiVersion: API_VERSION, kind: 'VirtualMachine', name: 'cold' },
        { apiVersion: API_VERSION, kind: 'VirtualDisk', name: 'sys' },
        { apiVersion: API_VERSION, kind: 'VirtualDisk', name: 'logs' },
      ]),
    );
    expect(ready(got)).toMatchObject({ status: 'True', reason: 'VirtualMachineSnapshotReady' });
    for (const name of got.status?.virtualDiskSnapshotNames ?? []) {
      const vds = await snap.vdSnapshots.get({ namespace: ns, name });
      expect(vds.status?.phase).toBe('Ready');
      expect(vds.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'VirtualMachineSnapshot', uid: created.metadata.uid, controller: true })]);
    }
    const secretName = got.status?.virtualMachineSnapshotSecretName ?? '';
    const secret = await c.secrets.get({ namespace: ns, name: secretName });
    const decoded = (key: string): unknown => JSON.parse(Buffer.from(secret.data?.[key] ?? '', 'base64').toString()) as unknown;
    const cold = await c.vms.get({ namespace: ns, name: 'cold' });
    expect(decoded('virtualMachine')).toMatchObject({ kind: 'VirtualMachine', metadata: { name: 'cold' }, spec: cold.spec });
    expect(decoded('virtualDisks')).toEqual([
      expect.objectContaining({ kind: 'VirtualDisk', metadata: expect.objectContaining({ name: 'sys' }) }),
      expect.objectContaining({ kind: 'VirtualDisk', metadata: expect.objectContaining({ name: 'logs' }) }),
    ]);

    await snap.vmSnapshots.delete({ namespace: ns, name: 'cold-1' });
    await eventually(() => gone(() => snap.vdSnapshots.get({ namespace: ns, name: 'cold-1-sys' })), 'disk snapshot garbage-collected');
    await eventually(() => gone(() => c.secrets.get({ namespace: ns, name: secretName })), 'Secret garbage-collected');
  });

  it('a running VM: inconsistent without requiredConsistency, waiting without a guest agent, frozen once for all its disks when it connects', async () => {
    for (const d of ['hot-root', 'hot-data']) await c.disks.create(blankDisk(d));
    for (const d of ['hot-root', 'hot-data']) await diskReady(d);
    const blockDeviceRefs = [
      { kind: 'VirtualDisk' as const, name: 'hot-root' },
      { kind: 'VirtualDisk' as const, name: 'hot-data' },
    ];
    await c.vms.create(vm(scope, 'hot', className, { blockDeviceRefs }));
    await eventually(async () => (await c.vms.get({ namespace: ns, name: 'hot' })).status?.phase === 'Running', 'VM Running');

    await snap.vmSnapshots.create(vmSnapshot('hot-now', 'hot', false));
    const now = await vmSnapshotIn('hot-now', 'Ready');
    expect(now.status?.consistent).toBe(false);

    await snap.vmSnapshots.create(vmSnapshot('hot-strict', 'hot'));
    const waiting = await vmSnapshotIn('hot-strict', 'InProgress');
    expect(ready(waiting)).toMatchObject({
      status: 'False',
      reason: 'PotentiallyInconsistent',
      message: expect.stringMatching(/guest agent is not connected/),
    });
    expect(waiting.status?.virtualDiskSnapshotNames).toBeUndefined();

    await agentConnects('hot');
    const frozen = await vmSnapshotIn('hot-strict', 'Ready');
    expect(frozen.status?.consistent).toBe(true);
    expect(freeze.of('hot')).toEqual(['freeze', 'unfreeze']);
    expect(frozen.status?.virtualDiskSnapshotNames).toHaveLength(2);
    for (const name of frozen.status?.virtualDiskSnapshotNames ?? []) {
      const vds = await snap.vdSnapshots.get({ namespace: ns, name });
      expect(vds.metadata.annotations?.['virtualization.deckhouse.io/frozen-vm']).toBe('hot');
      expect(frozenAtTake.get(vds.status?.volumeSnapshotName ?? '')).toBe(true);
    }
  });

  it('fails for a VM that does not exist and waits Pending while a disk is not Ready', async () => {
    await snap.vmSnapshots.create(vmSnapshot('nobody-1', 'nobody'));
    const nobody = await vmSnapshotIn('nobody-1', 'Failed');
    expect(ready(nobody)).toMatchObject({ reason: 'VirtualMachineSnapshotFailed', message: `VirtualMachine nobody does not exist in namespace ${ns}` });
    expect(nobody.status?.conditions?.find((x) => x.type === 'VirtualMachineReady')).toMatchObject({
      status: 'False',
      reason: 'VirtualMachineNotReadyForSnapshotting',
    });

    await c.disks.create(blankDisk('stuck', `missing-${scope.id}`));
    await c.vms.create(vm(scope, 'stuck', className, { runPolicy: 'AlwaysOff', blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'stuck' }] }));
    await snap.vmSnapshots.create(vmSnapshot('stuck-1', 'stuck'));
    const stuck = await eventually(async () => {
      const got = await snap.vmSnapshots.get({ namespace: ns, name: 'stuck-1' });
      const reason = (ready(got) as { reason?: string } | undefined)?.reason;
      return got.status?.phase === 'Pending' && (reason === 'BlockDevicesNotReady' || reason === 'WaitingForTheVirtualMachine') && got;
    }, 'VM snapshot waits');
    expect(stuck.status?.virtualDiskSnapshotNames).toBeUndefined();
    expect((ready(stuck) as { message?: string }).message).toMatch(/stuck/);
  });
});

describe('VirtualMachineOperation Restore and Clone', () => {
  const opIn = (name: string, phase: string): Promise<VirtualMachineOperation> =>
    readWhen(() => c.vmops.get({ namespace: ns, name }), phaseIs(phase), `operation ${name} ${phase}`);
  const completed = (o: VirtualMachineOperation): { reason?: string; message?: string } | undefined =>
    o.status?.conditions?.find((x) => x.type === 'Completed');

  /** A stopped VM on one Ready disk of its own name, and a Ready snapshot of it. */
  async function stoppedVMWithSnapshot(name: string): Promise<void> {
    await c.disks.create(blankDisk(`${name}-root`));
    await diskReady(`${name}-root`);
    await c.vms.create(vm(scope, name, className, { runPolicy: 'AlwaysOff', blockDeviceRefs: [{ kind: 'VirtualDisk', name: `${name}-root` }] }));
    await eventually(async () => (await c.vms.get({ namespace: ns, name })).status?.phase === 'Stopped', `VM ${name} Stopped`);
    await snap.vmSnapshots.create({
      apiVersion: API_VERSION,
      kind: 'VirtualMachineSnapshot',
      metadata: { name: `${name}-snap`, namespace: ns },
      spec: { virtualMachineName: name, keepIPAddress: 'Never', requiredConsistency: true },
    });
    await eventually(async () => (await snap.vmSnapshots.get({ namespace: ns, name: `${name}-snap` })).status?.phase === 'Ready', `snapshot of ${name} Ready`);
  }

  it('Restore sets the VM spec back and recreates its disks from their snapshots', async () => {
    await stoppedVMWithSnapshot('rs');
    const oldDisk = await c.disks.get({ namespace: ns, name: 'rs-root' });
    await c.vms.mergePatch({ namespace: ns, name: 'rs' }, { spec: { cpu: { cores: 4 } } });
    const restore = await c.vmops.create(vmop(scope, 'rs-restore', 'rs', 'Restore', { restore: { mode: 'Strict', virtualMachineSnapshotName: 'rs-snap' } }));
    const done = await opIn('rs-restore', 'Completed');
    expect(done.status?.resources).toEqual([
      expect.objectContaining({ kind: 'VirtualMachine', name: 'rs', status: 'Completed' }),
      expect.objectContaining({ kind: 'VirtualDisk', name: 'rs-root', status: 'Completed' }),
    ]);
    expect((await c.vms.get({ namespace: ns, name: 'rs' })).spec.cpu.cores).toBe(2);
    const disk = await c.disks.get({ namespace: ns, name: 'rs-root' });
    expect(disk.metadata.uid).not.toBe(oldDisk.metadata.uid);
    expect(disk.metadata.annotations?.['virtualization.deckhouse.io/vmoprestore']).toBe(restore.metadata.uid);
    expect(disk.status?.phase).toBe('Ready');
    expect(disk.spec.dataSource).toEqual({ type: 'ObjectRef', objectRef: { kind: 'VirtualDiskSnapshot', name: 'rs-snap-rs-root' } });
    await eventually(async () => (await c.vms.get({ namespace: ns, name: 'rs' })).status?.phase === 'Stopped', 'VM Stopped again');
  });

  it('Restore fails for a snapshot that does not exist, a snapshot of another VM and a broken snapshot Secret; DryRun changes nothing', async () => {
    await stoppedVMWithSnapshot('rs2');
    await c.vmops.create(vmop(scope, 'rs2-none', 'rs2', 'Restore', { restore: { mode: 'Strict', virtualMachineSnapshotName: 'nope' } }));
    expect(completed(await opIn('rs2-none', 'Failed'))).toMatchObject({ reason: 'OperationFailed', message: 'VirtualMachineSnapshot nope does not exist' });
    await c.vmops.create(vmop(scope, 'rs2-other', 'rs2', 'Restore', { restore: { mode: 'Strict', virtualMachineSnapshotName: 'rs-snap' } }));
    expect(completed(await opIn('rs2-other', 'Failed'))).toMatchObject({ message: 'VirtualMachineSnapshot rs-snap is a snapshot of VirtualMachine rs' });
    const before = await c.disks.get({ namespace: ns, name: 'rs2-root' });
    await c.vmops.create(vmop(scope, 'rs2-dry', 'rs2', 'Restore', { restore: { mode: 'DryRun', virtualMachineSnapshotName: 'rs2-snap' } }));
    const dry = await opIn('rs2-dry', 'Completed');
    expect(dry.status?.resources).toEqual([
      expect.objectContaining({ kind: 'VirtualMachine', name: 'rs2', message: 'the spec would be restored' }),
      expect.objectContaining({ kind: 'VirtualDisk', name: 'rs2-root', message: 'would be recreated from rs2-snap-rs2-root' }),
    ]);
    expect((await c.disks.get({ namespace: ns, name: 'rs2-root' })).metadata.uid).toBe(before.metadata.uid);

    // A snapshot Secret someone broke (truncated JSON) is refused with a sentence, nothing restored.
    const secretName = (await snap.vmSnapshots.get({ namespace: ns, name: 'rs2-snap' })).status?.virtualMachineSnapshotSecretName ?? '';
    const broken = Buffer.from('{"apiVersion":"virtualization.deckhouse.io/v1alpha2","spec":{').toString('base64');
    await c.secrets.mergePatch({ namespace: ns, name: secretName }, { data: { virtualMachine: broken } });
    await c.vmops.create(vmop(scope, 'rs2-broken', 'rs2', 'Restore', { restore: { mode: 'Strict', virtualMachineSnapshotName: 'rs2-snap' } }));
    expect(completed(await opIn('rs2-broken', 'Failed'))?.message).toBe(
      `the Secret ${secretName} of VirtualMachineSnapshot rs2-snap is missing or does not hold a captured VM`,
    );
    expect((await c.disks.get({ namespace: ns, name: 'rs2-root' })).metadata.uid).toBe(before.metadata.uid);
  });

  it('Clone makes a new VM with renamed disks from a snapshot, then removes that snapshot; a second one with the same names fails', async () => {
    await stoppedVMWithSnapshot('src');
    const clone = await c.vmops.create(vmop(scope, 'src-clone', 'src', 'Clone', { clone: { mode: 'Strict', customization: { namePrefix: 'copy-' } } }));
    const done = await opIn('src-clone', 'Completed');
    expect(done.status?.resources).toEqual([
      expect.objectContaining({ kind: 'VirtualMachine', name: 'copy-src', status: 'Completed' }),
      expect.objectContaining({ kind: 'VirtualDisk', name: 'copy-src-root', status: 'Completed' }),
    ]);
    const copy = await c.vms.get({ namespace: ns, name: 'copy-src' });
    expect(copy.spec.blockDeviceRefs).toEqual([{ kind: 'VirtualDisk', name: 'copy-src-root' }]);
    expect(copy.metadata.annotations?.['virtualization.deckhouse.io/vmopclone']).toBe(clone.metadata.uid);
    const disk = await c.disks.get({ namespace: ns, name: 'copy-src-root' });
    expect(disk.spec.dataSource).toEqual({ type: 'ObjectRef', objectRef: { kind: 'VirtualDiskSnapshot', name: 'd8v-vmop-src-clone-src-root' } });
    await eventually(() => gone(() => snap.vmSnapshots.get({ namespace: ns, name: 'd8v-vmop-src-clone' })), 'the clone snapshot removed');
    // The source is untouched.
    expect((await c.vms.get({ namespace: ns, name: 'src' })).spec.blockDeviceRefs).toEqual([{ kind: 'VirtualDisk', name: 'src-root' }]);

    await c.vmops.create(vmop(scope, 'src-clone-2', 'src', 'Clone', { clone: { mode: 'Strict', customization: { namePrefix: 'copy-' } } }));
    const again = await opIn('src-clone-2', 'Failed');
    expect(completed(again)?.message).toBe('names already taken: copy-src, copy-src-root');
  });

  it('Clone DryRun lists the new names and creates nothing, or fails naming a taken one; a running VM cannot be cloned', async () => {
    const replace = (kind: string, name: string, to: string): { from: { kind: string; name: string }; to: string } => ({ from: { kind, name }, to });
    await c.vmops.create(
      vmop(scope, 'src-dry', 'src', 'Clone', {
        clone: { mode: 'DryRun', nameReplacement: [replace('VirtualMachine', 'src', 'twin'), replace('VirtualDisk', 'src-root', 'twin-root')] },
      }),
    );
    const dry = await opIn('src-dry', 'Completed');
    expect(dry.status?.resources).toEqual([
      expect.objectContaining({ kind: 'VirtualMachine', name: 'twin', status: 'Completed', message: 'would clone src' }),
      expect.objectContaining({ kind: 'VirtualDisk', name: 'twin-root', status: 'Completed', message: 'would clone src-root' }),
    ]);
    expect(await gone(() => c.vms.get({ namespace: ns, name: 'twin' }))).toBe(true);
    expect(await gone(() => c.disks.get({ namespace: ns, name: 'twin-root' }))).toBe(true);

    await c.vmops.create(vmop(scope, 'src-dry-2', 'src', 'Clone', { clone: { mode: 'DryRun', nameReplacement: [replace('VirtualMachine', 'src', 'twin')] } }));
    const taken = await opIn('src-dry-2', 'Failed');
    expect(completed(taken)?.message).toBe('names already taken: src-root');
    expect(taken.status?.resources).toContainEqual(
      expect.objectContaining({ kind: 'VirtualDisk', name: 'src-root', status: 'Failed', message: 'VirtualDisk src-root already exists' }),
    );

    await c.disks.create(blankDisk('busy-root'));
    await diskReady('busy-root');
    await c.vms.create(vm(scope, 'busy', className, { blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'busy-root' }] }));
    await eventually(async () => (await c.vms.get({ namespace: ns, name: 'busy' })).status?.phase === 'Running', 'VM busy Running');
    await c.vmops.create(vmop(scope, 'busy-clone', 'busy', 'Clone', { clone: { mode: 'Strict', customization: { nameSuffix: '-2' } } }));
    const refused = await opIn('busy-clone', 'Failed');
    expect(completed(refused)?.reason).toBe('NotApplicableForVirtualMachinePhase');
  });

  it('VirtualMachineSnapshotOperation CreateVirtualMachine makes a new VM from a snapshot; a missing snapshot and a taken name fail', async () => {
    await stoppedVMWithSnapshot('origin');
    const vmsop = (name: string, snapshot: string, mode: 'Strict' | 'DryRun', namePrefix: string): VirtualMachineSnapshotOperation => ({
      apiVersion: API_VERSION,
      kind: 'VirtualMachineSnapshotOperation',
      metadata: { name, namespace: ns },
      spec: { type: 'CreateVirtualMachine', virtualMachineSnapshotName: snapshot, createVirtualMachine: { mode, customization: { namePrefix } } },
    });
    const vmsopIn = (name: string, phase: string): Promise<VirtualMachineSnapshotOperation> =>
      readWhen(() => snap.vmsops.get({ namespace: ns, name }), phaseIs(phase), `snapshot operation ${name} ${phase}`);
    const completedOf = (o: VirtualMachineSnapshotOperation): unknown => o.status?.conditions?.find((x) => x.type === 'Completed');

    const created = await snap.vmsops.create(vmsop('origin-new', 'origin-snap', 'Strict', 'new-'));
    const done = await vmsopIn('origin-new', 'Completed');
    expect(completedOf(done)).toMatchObject({ status: 'True', reason: 'OperationCompleted' });
    expect(done.status?.resources).toEqual([
      expect.objectContaining({ kind: 'VirtualMachine', name: 'new-origin', status: 'Completed' }),
      expect.objectContaining({ kind: 'VirtualDisk', name: 'new-origin-root', status: 'Completed' }),
    ]);
    const made = await c.vms.get({ namespace: ns, name: 'new-origin' });
    expect(made.spec.blockDeviceRefs).toEqual([{ kind: 'VirtualDisk', name: 'new-origin-root' }]);
    expect(made.metadata.annotations?.['virtualization.deckhouse.io/vmsopcreated']).toBe(created.metadata.uid);
    expect((await c.disks.get({ namespace: ns, name: 'new-origin-root' })).status?.phase).toBe('Ready');
    await eventually(
      async () => ((await snap.vmsops.get({ namespace: ns, name: 'origin-new' })).metadata.finalizers ?? []).length === 0,
      'vmsop-cleanup dropped',
    );

    await snap.vmsops.create(vmsop('nothing', 'no-such-snapshot', 'Strict', 'x-'));
    expect(completedOf(await vmsopIn('nothing', 'Failed'))).toMatchObject({
      reason: 'VirtualMachineSnapshotNotFound',
      message: 'VirtualMachineSnapshot no-such-snapshot does not exist',
    });
    await snap.vmsops.create(vmsop('again', 'origin-snap', 'DryRun', 'new-'));
    const again = await vmsopIn('again', 'Failed');
    expect(completedOf(again)).toMatchObject({ reason: 'OperationFailed', message: 'names already taken: new-origin, new-origin-root' });
  });
});
