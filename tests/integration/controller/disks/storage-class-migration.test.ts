/**
 * Storage-class migration of a running VM's disks against the real apiserver: the disk reconciler
 * makes the target claim in the new class (bound by the storage simulator), the VM hands it to
 * KubeVirt with `updateVolumesStrategy: Migration`, KubeVirt (the simulator's virt-controller) takes
 * it into the instance (`migratedVolumes`, `VolumesChange`), a Migrate operation annotated
 * `volume-migration` moves the VM (the test completes the migration, as virt-handler would), and the
 * disk ends on the target claim with the source claim deleted. Root alone, root plus a data disk,
 * twice in a row; to and from a WaitForFirstConsumer class (local disks: the claim binds on the node
 * the scheduler picks for its first consumer, played here by the test as kube-scheduler would for the
 * migration's target pod or the VM's launcher pod); bad input: a class that does not exist leaves the
 * VM running on its current claim, and a WaitForFirstConsumer target that no pod consumes is deleted
 * when the VM stops.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VirtualDisk } from '../../../../shared/api/resources/virtualdisk.js';
import type { VirtualMachineOperation } from '../../../../shared/api/resources/vmop.js';
import { NotFoundError } from '../../../../shared/errors/index.js';
import { makeStorageClients, type StorageClients } from '../../../../daemons/controller/reconcilers/provisioning/kube.js';
import { VOLUME_MIGRATION_ANNOTATION } from '../../../../daemons/controller/reconcilers/volume-migration/reconciler.js';
import { StorageSimulator } from '../../../../platform/simulators/storage-simulator/simulator.js';
import { SELECTED_NODE } from '../../../../platform/simulators/storage-simulator/classes.js';
import { disk } from '../builders.js';
import { SCOPE_LABEL, TEST_FIELD_MANAGER, eventually, mainKube, readWhen } from '../fixtures.js';
import { phaseIs, useWorld } from '../world.js';

jest.setTimeout(240_000);

const t = useWorld('ctl-scmig', { env: { STORAGE_RECONCILERS: 'true', DEPENDENCY_RECHECK_INTERVAL: '1s' } });
let sc: StorageClients;
let storage: StorageSimulator;
let volumesDir: string;
const classes: string[] = [];
/** The classes of the test: the first is where disks start; `local` binds on its first consumer's node. */
let [first, second, third, local] = ['', '', '', ''];

const diskWhen = (name: string, check: (d: VirtualDisk) => boolean, what: string): Promise<VirtualDisk> =>
  readWhen(() => t.c.disks.get({ namespace: t.w.ns, name }), check, `${name}: ${what}`, 90_000);
const migratingCondition = (d: VirtualDisk): { status: string; reason?: string; message?: string } | undefined =>
  d.status?.conditions?.find((c) => c.type === 'Migrating');
const claimOf = (d: VirtualDisk): string => d.status?.target?.persistentVolumeClaimName ?? '';

async function pvcGoneOrDeleting(name: string): Promise<boolean> {
  try {
    return (await sc.pvcs.get({ namespace: t.w.ns, name })).metadata.deletionTimestamp !== undefined;
  } catch (err: unknown) {
    if (err instanceof NotFoundError) return true;
    throw err;
  }
}

async function readyDisk(name: string, storageClassName: string): Promise<VirtualDisk> {
  const d = disk(t.w.scope, name);
  await t.c.disks.create({ ...d, spec: { persistentVolumeClaim: { size: '1Gi', storageClassName } } });
  return diskWhen(name, (x) => x.status?.phase === 'Ready', 'Ready');
}

async function runningVM(name: string, disks: string[]): Promise<void> {
  await t.w.createVM(name, { runPolicy: 'AlwaysOn', blockDeviceRefs: disks.map((d) => ({ kind: 'VirtualDisk' as const, name: d })) });
  await t.w.vmWhen(name, phaseIs('Running'), 'Running', 90_000);
}

const setClass = (name: string, storageClassName: string): Promise<VirtualDisk> =>
  t.c.disks.mergePatch({ namespace: t.w.ns, name }, { spec: { persistentVolumeClaim: { storageClassName } } });

const volumeOps = async (vm: string): Promise<VirtualMachineOperation[]> =>
  (await t.c.vmops.list({ namespace: t.w.ns })).items.filter(
    (o) => o.spec.virtualMachineName === vm && o.metadata.annotations?.[VOLUME_MIGRATION_ANNOTATION] === 'true',
  );

/**
 * Play virt-handler: each volume-migration operation's KubeVirt migration runs to its end, until `done`
 * holds. `onTarget(node)` runs first for each, with the node the target pod runs on (kube-scheduler's part).
 */
async function migrateUntil(vm: string, done: () => Promise<boolean>, what: string, onTarget?: (node: string) => Promise<boolean>): Promise<number> {
  const completed = new Set<string>();
  await waitOr(
    vm,
    eventually(
      async () => {
        if (await done()) return true;
        for (const op of await volumeOps(vm)) {
          const migration = `vmop-${op.metadata.name ?? ''}`;
          if (completed.has(migration)) continue;
          const vmim = await t.c.migrations.get({ namespace: t.w.ns, name: migration }).catch(() => undefined);
          if (vmim === undefined) continue;
          const node = `node-${String(completed.size + 2)}`;
          if (onTarget !== undefined && !(await onTarget(node))) continue;
          await t.w.kubevirt.completeMigration(migration, vm, node);
          completed.add(migration);
        }
        return false;
      },
      what,
      120_000,
    ),
  );
  return completed.size;
}

/** `wait`, and if it times out, the VM's disks, claims and operations in the error (what a failure needs to be read). */
async function waitOr<T>(vm: string, wait: Promise<T>): Promise<T> {
  try {
    return await wait;
  } catch (err: unknown) {
    const disks = (await t.c.disks.list({ namespace: t.w.ns })).items.map((d) => ({
      name: d.metadata.name,
      phase: d.status?.phase,
      target: claimOf(d),
      migration: d.status?.migrationState,
      migrating: migratingCondition(d),
    }));
    const vmi = await t.c.kvvmis.get({ namespace: t.w.ns, name: vm }).catch(() => undefined);
    const kvvm = await t.c.kvvms.get({ namespace: t.w.ns, name: vm }).catch(() => undefined);
    const state = {
      disks,
      kvvm: kvvm?.spec.template.spec.volumes,
      vmi: vmi?.spec.volumes,
      migratedVolumes: vmi?.status?.migratedVolumes,
      conditions: vmi?.status?.conditions,
      ops: (await volumeOps(vm)).map((o) => [o.metadata.name, o.status?.phase]),
    };
    throw new Error(`${err instanceof Error ? err.message : String(err)}; state: ${JSON.stringify(state)}`, { cause: err });
  }
}

/** kube-scheduler's part for a claim of a WaitForFirstConsumer class: the node its first consumer was placed on. */
const selectNode = (claim: string, node: string): Promise<unknown> =>
  sc.pvcs.mergePatch({ namespace: t.w.ns, name: claim }, { metadata: { annotations: { [SELECTED_NODE]: node } } });

/** The node the claim's volume is pinned to (its PersistentVolume's node affinity), once it is bound. */
async function pinnedNode(claim: string): Promise<string | undefined> {
  const pvc = await sc.pvcs.get({ namespace: t.w.ns, name: claim });
  if (pvc.status?.phase !== 'Bound' || (pvc.spec.volumeName ?? '') === '') return undefined;
  const pv = (await sc.pvs.get({ name: pvc.spec.volumeName ?? '' })) as { spec?: { nodeAffinity?: unknown } };
  const terms = (pv.spec?.nodeAffinity as { required?: { nodeSelectorTerms?: { matchExpressions?: { values?: string[] }[] }[] } } | undefined)?.required;
  return terms?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values?.[0];
}

beforeAll(async () => {
  const kube = mainKube();
  sc = makeStorageClients(kube, TEST_FIELD_MANAGER);
  for (const n of ['a', 'b', 'c', 'w']) {
    const name = `scmig-${n}-${t.w.scope.id}`;
    await sc.storageClasses.create({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name, labels: { [SCOPE_LABEL]: t.w.scope.id } },
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: n === 'w' ? 'WaitForFirstConsumer' : 'Immediate',
    });
    classes.push(name);
  }
  [first = '', second = '', third = '', local = ''] = classes;
  volumesDir = mkdtempSync(join(tmpdir(), 'scmig-volumes-'));
  storage = new StorageSimulator(kube, { volumesDir, storageClasses: classes, namespace: t.w.ns, requireNode: false });
  await storage.start();
});

afterAll(async () => {
  await storage?.stop();
  if (volumesDir) rmSync(volumesDir, { recursive: true, force: true });
  for (const name of classes) await sc.storageClasses.delete({ name }).catch(() => undefined);
});

describe('storage-class migration of a running VM', () => {
  it('moves a root disk to the new class live, twice in a row, and deletes each source claim', async () => {
    const before = await readyDisk('root', first);
    await runningVM('solo', ['root']);
    const uid = await t.w.instanceUid('solo');
    let claim = claimOf(before);

    for (const [round, cls] of [second, third].entries()) {
      await setClass('root', cls);
      const moving = await diskWhen('root', (d) => migratingCondition(d)?.status === 'True', `round ${String(round + 1)}: Migrating True`);
      expect(moving.status?.phase).toBe('Migrating');
      expect(moving.status?.migrationState).toMatchObject({ sourcePVC: claim });
      const target = moving.status?.migrationState?.targetPVC ?? '';
      expect((await sc.pvcs.get({ namespace: t.w.ns, name: target })).spec.storageClassName).toBe(cls);
      // The VM hands the target claim to KubeVirt as a volume migration, and the instance takes it.
      const kvvm = await eventually(async () => {
        const k = await t.c.kvvms.get({ namespace: t.w.ns, name: 'solo' });
        return k.spec.template.spec.volumes?.some((v) => v.persistentVolumeClaim?.claimName === target) === true ? k : undefined;
      }, 'the internal VM names the target claim');
      expect(kvvm.spec.updateVolumesStrategy).toBe('Migration');
      const vmi = await eventually(async () => {
        const i = await t.c.kvvmis.get({ namespace: t.w.ns, name: 'solo' });
        return (i.status?.migratedVolumes ?? []).length > 0 ? i : undefined;
      }, 'the instance lists the migrated volume');
      expect(vmi.status?.migratedVolumes).toEqual([
        expect.objectContaining({
          sourcePVCInfo: expect.objectContaining({ claimName: claim }),
          destinationPVCInfo: expect.objectContaining({ claimName: target }),
        }),
      ]);

      await migrateUntil('solo', async () => (await t.c.disks.get({ namespace: t.w.ns, name: 'root' })).status?.phase === 'Ready', 'the disk migrated');
      const done = await diskWhen('root', (d) => d.status?.migrationState?.result === 'Succeeded' && claimOf(d) === target, 'on its target claim');
      expect(done.status?.storageClassName).toBe(cls);
      expect(done.status?.migrationState).toMatchObject({ sourcePVC: claim, targetPVC: target, message: 'Migration completed.' });
      expect(migratingCondition(done)).toBeUndefined();
      await eventually(() => pvcGoneOrDeleting(claim), `the source claim ${claim} deleted`);
      claim = target;
    }
    // Live all along: the same instance, no restart asked for.
    const vm = await t.w.vmWhen('solo', phaseIs('Running'), 'Running');
    expect(await t.w.instanceUid('solo')).toBe(uid);
    expect(vm.status?.restartAwaitingChanges ?? []).toEqual([]);
    expect(await volumeOps('solo')).toHaveLength(2);
  });

  it('moves a root and a data disk of one VM to the new class', async () => {
    const [root, data] = [await readyDisk('r2', first), await readyDisk('data2', first)];
    await runningVM('pair', ['r2', 'data2']);
    await setClass('r2', second);
    await setClass('data2', second);
    const migrated = await migrateUntil(
      'pair',
      async () =>
        (await Promise.all(['r2', 'data2'].map((n) => t.c.disks.get({ namespace: t.w.ns, name: n })))).every(
          (d) => d.status?.migrationState?.result === 'Succeeded' && d.status.phase === 'Ready',
        ),
      'both disks migrated',
    );
    expect(migrated).toBeGreaterThanOrEqual(1);
    for (const [name, old] of [
      ['r2', root],
      ['data2', data],
    ] as const) {
      const d = await t.c.disks.get({ namespace: t.w.ns, name });
      expect(d.status?.storageClassName).toBe(second);
      expect(claimOf(d)).not.toBe(claimOf(old));
      await eventually(() => pvcGoneOrDeleting(claimOf(old)), `${name}: the source claim deleted`);
    }
    const kvvm = await t.c.kvvms.get({ namespace: t.w.ns, name: 'pair' });
    const claims = kvvm.spec.template.spec.volumes?.flatMap((v) => (v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : []));
    const after = await Promise.all(['r2', 'data2'].map((n) => t.c.disks.get({ namespace: t.w.ns, name: n })));
    expect(claims).toEqual(after.map(claimOf));
    await t.w.vmWhen('pair', phaseIs('Running'), 'Running');
  });

  it('reverts when the live migration fails: the VM gets its source claim back, the target claim is deleted', async () => {
    const before = await readyDisk('back', first);
    await runningVM('fails', ['back']);
    await setClass('back', second);
    const moving = await diskWhen('back', (d) => migratingCondition(d)?.status === 'True', 'Migrating True');
    const target = moving.status?.migrationState?.targetPVC ?? '';
    const op = await eventually(async () => (await volumeOps('fails'))[0], 'the volume-migration operation');
    const migration = `vmop-${op.metadata.name ?? ''}`;
    await eventually(() => t.c.migrations.get({ namespace: t.w.ns, name: migration }), 'its KubeVirt migration');
    // virt-handler reports the migration failed (the guest stays on the source node and claim).
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await t.c.kvvmis.mergePatch(
      { namespace: t.w.ns, name: 'fails' },
      { status: { migrationState: { startTimestamp: at, endTimestamp: at, completed: true, failed: true, sourceNode: t.w.nodeName } } },
    );
    await t.c.migrations.patchStatus({ namespace: t.w.ns, name: migration }, { phase: 'Failed' });
    const reverted = await diskWhen('back', (d) => d.status?.migrationState?.result === 'Failed', 'reverted');
    expect(reverted.status?.migrationState?.message).toContain('Migration reverted');
    expect(reverted.status?.phase).toBe('Ready');
    expect(claimOf(reverted)).toBe(claimOf(before));
    expect(reverted.status?.storageClassName).toBe(first);
    expect(migratingCondition(reverted)).toBeUndefined();
    await eventually(() => pvcGoneOrDeleting(target), 'the target claim deleted');
    const kvvm = await t.c.kvvms.get({ namespace: t.w.ns, name: 'fails' });
    expect(kvvm.spec.template.spec.volumes?.some((v) => v.persistentVolumeClaim?.claimName === claimOf(before))).toBe(true);
    const vmi = await t.c.kvvmis.get({ namespace: t.w.ns, name: 'fails' });
    expect(vmi.spec.volumes?.some((v) => v.persistentVolumeClaim?.claimName === claimOf(before))).toBe(true);
    expect(vmi.status?.migratedVolumes ?? []).toEqual([]);
    await t.w.vmWhen('fails', phaseIs('Running'), 'Running');
  });

  it('reverts when the VM is stopped mid-migration: the disk stays on its source claim', async () => {
    const before = await readyDisk('halt', first);
    await runningVM('halts', ['halt']);
    await setClass('halt', second);
    const moving = await diskWhen('halt', (d) => migratingCondition(d)?.status === 'True', 'Migrating True');
    const target = moving.status?.migrationState?.targetPVC ?? '';
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'halts' }, { spec: { runPolicy: 'AlwaysOff' } });
    const reverted = await diskWhen('halt', (d) => d.status?.migrationState?.result === 'Failed', 'reverted');
    expect(reverted.status?.migrationState?.message).toBe('Migration reverted: the virtual machine is not running.');
    expect(claimOf(reverted)).toBe(claimOf(before));
    expect(reverted.status?.phase).toBe('Ready');
    await eventually(() => pvcGoneOrDeleting(target), 'the target claim deleted');
    const kvvm = await t.c.kvvms.get({ namespace: t.w.ns, name: 'halts' });
    expect(kvvm.spec.template.spec.volumes?.some((v) => v.persistentVolumeClaim?.claimName === claimOf(before))).toBe(true);
  });

  it('refuses a class that does not exist on the disk and keeps the VM running on its current claim', async () => {
    const before = await readyDisk('stay', first);
    await runningVM('stays', ['stay']);
    await setClass('stay', `no-such-class-${t.w.scope.id}`);
    const refused = await diskWhen('stay', (d) => migratingCondition(d)?.reason === 'StorageClassNotFound', 'StorageClassNotFound');
    expect(migratingCondition(refused)?.message).toContain(`no-such-class-${t.w.scope.id}`);
    expect(refused.status?.phase).toBe('Ready');
    expect(claimOf(refused)).toBe(claimOf(before));
    expect(refused.status?.migrationState).toBeUndefined();
    const kvvm = await t.c.kvvms.get({ namespace: t.w.ns, name: 'stays' });
    expect(kvvm.spec.template.spec.volumes?.some((v) => v.persistentVolumeClaim?.claimName === claimOf(before))).toBe(true);
    expect(kvvm.spec.updateVolumesStrategy).toBeUndefined();
    await t.w.vmWhen('stays', phaseIs('Running'), 'Running');
    expect(await volumeOps('stays')).toEqual([]);
    // Taken back, the condition goes; the process kept serving.
    await setClass('stay', first);
    await diskWhen('stay', (d) => migratingCondition(d) === undefined, 'Migrating gone');
  });
});

describe('storage-class migration with a WaitForFirstConsumer class (local disks)', () => {
  it("moves a disk to a WaitForFirstConsumer class: the target waits for its first consumer, binds on the migration target's node, and the disk ends there", async () => {
    const before = await readyDisk('to-local', first);
    await runningVM('goes-local', ['to-local']);
    await setClass('to-local', local);
    const waiting = await diskWhen(
      'to-local',
      (d) => migratingCondition(d)?.message === 'The target PersistentVolumeClaim is waiting for the first consumer.',
      'Migrating: the target waits for its first consumer',
    );
    expect(migratingCondition(waiting)).toMatchObject({ status: 'True', reason: 'InProgress' });
    const target = waiting.status?.migrationState?.targetPVC ?? '';
    const unbound = await sc.pvcs.get({ namespace: t.w.ns, name: target });
    expect(unbound.spec.storageClassName).toBe(local);
    expect(unbound.status?.phase).not.toBe('Bound');
    // Unbound, it is handed to KubeVirt all the same: the migration's target pod is its first consumer.
    await eventually(async () => {
      const k = await t.c.kvvms.get({ namespace: t.w.ns, name: 'goes-local' });
      return k.spec.template.spec.volumes?.some((v) => v.persistentVolumeClaim?.claimName === target) === true;
    }, 'the internal VM names the unbound target claim');

    const nodes: string[] = [];
    await migrateUntil(
      'goes-local',
      async () => (await t.c.disks.get({ namespace: t.w.ns, name: 'to-local' })).status?.phase === 'Ready',
      'the disk migrated to the local class',
      async (node) => {
        // The target pod scheduled on `node`: the claim binds there before the guest moves.
        await selectNode(target, node);
        nodes.push(node);
        return (await pinnedNode(target)) === node;
      },
    );
    const done = await diskWhen('to-local', (d) => d.status?.migrationState?.result === 'Succeeded' && claimOf(d) === target, 'on its local claim');
    expect(done.status?.storageClassName).toBe(local);
    expect(await pinnedNode(target)).toBe(nodes.at(-1));
    await eventually(() => pvcGoneOrDeleting(claimOf(before)), 'the source claim deleted');
    await t.w.vmWhen('goes-local', phaseIs('Running'), 'Running');
  });

  it('moves a disk bound on its first consumer off the WaitForFirstConsumer class to an Immediate one', async () => {
    const d = disk(t.w.scope, 'from-local');
    await t.c.disks.create({ ...d, spec: { persistentVolumeClaim: { size: '1Gi', storageClassName: local } } });
    const waiting = await diskWhen('from-local', (x) => x.status?.phase === 'WaitForFirstConsumer', 'WaitForFirstConsumer');
    const source = claimOf(waiting);
    await runningVM('leaves-local', ['from-local']);
    // The VM's launcher pod was its first consumer: scheduled on the world's node, the claim binds there.
    await selectNode(source, t.w.nodeName);
    await diskWhen('from-local', (x) => x.status?.phase === 'Ready', 'Ready once bound');
    expect(await pinnedNode(source)).toBe(t.w.nodeName);

    await setClass('from-local', second);
    await migrateUntil(
      'leaves-local',
      async () => (await t.c.disks.get({ namespace: t.w.ns, name: 'from-local' })).status?.migrationState?.result === 'Succeeded',
      'the disk migrated off the local class',
    );
    const done = await diskWhen('from-local', (x) => x.status?.phase === 'Ready' && claimOf(x) !== source, 'Ready on the new claim');
    expect(done.status?.storageClassName).toBe(second);
    expect((await sc.pvcs.get({ namespace: t.w.ns, name: claimOf(done) })).status?.phase).toBe('Bound');
    await eventually(() => pvcGoneOrDeleting(source), 'the local source claim deleted');
    await t.w.vmWhen('leaves-local', phaseIs('Running'), 'Running');
  });

  it('deletes a WaitForFirstConsumer target no pod consumed when the VM stops, and keeps the disk on its source', async () => {
    const before = await readyDisk('never', first);
    await runningVM('stops-early', ['never']);
    await setClass('never', local);
    const waiting = await diskWhen('never', (x) => migratingCondition(x)?.reason === 'InProgress', 'Migrating InProgress');
    const target = waiting.status?.migrationState?.targetPVC ?? '';
    await t.c.vms.mergePatch({ namespace: t.w.ns, name: 'stops-early' }, { spec: { runPolicy: 'AlwaysOff' } });
    const reverted = await diskWhen('never', (x) => x.status?.migrationState?.result === 'Failed', 'reverted');
    expect(reverted.status?.migrationState?.message).toBe('Migration reverted: the virtual machine is not running.');
    expect(claimOf(reverted)).toBe(claimOf(before));
    expect(reverted.status?.storageClassName).toBe(first);
    await eventually(() => pvcGoneOrDeleting(target), 'the unbound target claim deleted');
  });
});
