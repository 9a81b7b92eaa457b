import { describe, expect, it } from '@jest/globals';
import { POOL_LABELS, type VirtualMachinePool } from '../../../shared/api/resources/vmpool.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { descriptorOf } from '../../../shared/kube/index.js';
import { virtualMachinePool } from '../../../shared/api/resources/vmpool.js';
import { kubectl } from '../../env/index.js';
import { eventually, mainKube } from './fixtures.js';
import { makeAllDisksReady, pool, poolClient } from './pool-world.js';
import { useWorld } from './world.js';

const t = useWorld('ctl-pool');

const condition = (p: VirtualMachinePool, type: string): { status: string; reason: string; message: string } | undefined =>
  p.status?.conditions?.find((x) => x.type === type);

async function members(poolName: string): Promise<VirtualMachine[]> {
  return (await t.c.vms.list({ namespace: t.w.ns, labelSelector: `${POOL_LABELS.pool}=${poolName}` })).items.filter(
    (v) => v.metadata.deletionTimestamp === undefined,
  );
}

/** The pool once `check` holds, the disks of its members played Ready meanwhile. */
async function poolWhen(name: string, check: (p: VirtualMachinePool) => boolean, what: string): Promise<VirtualMachinePool> {
  const client = poolClient(mainKube());
  return eventually(async () => {
    await makeAllDisksReady(t.c, t.w.ns);
    const p = await client.get({ namespace: t.w.ns, name });
    return check(p) && p;
  }, `${name}: ${what}`);
}

describe('a VirtualMachinePool', () => {
  it('keeps spec.replicas VMs, each with its own disk and the shared image, and reports them Ready', async () => {
    const client = poolClient(mainKube());
    const created = await client.create(pool(t.w, 'web'));
    const ready = await poolWhen('web', (p) => p.status?.readyReplicas === 3, '3 ready replicas');
    expect(ready.status).toMatchObject({
      replicas: 3,
      updatedReplicas: 3,
      restartPendingReplicas: 0,
      selector: `${POOL_LABELS.poolUID}=${created.metadata.uid}`,
    });
    expect(ready.status?.desiredTemplateHash).toMatch(/^[0-9a-f]+$/);
    expect(condition(ready, 'Available')).toMatchObject({ status: 'True', reason: 'AllReplicasReady' });
    expect(condition(ready, 'Synced')).toMatchObject({ status: 'True', reason: 'PoolSynced' });

    const vms = await members('web');
    expect(vms).toHaveLength(3);
    for (const vm of vms) {
      expect(vm.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
      expect(vm.metadata.labels).toMatchObject({
        app: 'web',
        [POOL_LABELS.poolUID]: created.metadata.uid,
        [POOL_LABELS.templateHash]: ready.status?.desiredTemplateHash,
      });
      expect(vm.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'VirtualMachinePool', name: 'web', uid: created.metadata.uid, controller: true }),
      ]);
      expect(vm.spec.blockDeviceRefs).toEqual([
        { kind: 'VirtualDisk', name: `${vm.metadata.name}-root` },
        { kind: 'ClusterVirtualImage', name: t.w.imageName },
      ]);
      const disk = await t.c.disks.get({ namespace: t.w.ns, name: `${vm.metadata.name}-root` });
      expect(disk.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'VirtualMachine', uid: vm.metadata.uid, controller: true })]);
      expect(disk.metadata.labels?.[POOL_LABELS.diskTemplate]).toBe('root');
    }
  });

  it('scales through the scale subresource (kubectl scale), removing the newest members and their Delete disks', async () => {
    const client = poolClient(mainKube());
    await client.create(pool(t.w, 'newest', { replicas: 2 }));
    await poolWhen('newest', (p) => p.status?.readyReplicas === 2, '2 ready');
    const first = await members('newest');
    // NewestFirst is decided by creationTimestamp, which has one-second resolution: the member the
    // scale-up adds is only the newest once the clock has left the second its elders were made in.
    const eldest = Math.max(...first.map((v) => Date.parse(v.metadata.creationTimestamp ?? '')));
    await eventually(() => Date.now() >= eldest + 1000, 'a second later than the first members were created');
    const def = descriptorOf(virtualMachinePool);
    expect((await kubectl(['scale', `${def.plural}.${def.group}`, 'newest', '--replicas=3', '-n', t.w.ns])).code).toBe(0);
    await poolWhen('newest', (p) => p.status?.readyReplicas === 3, '3 ready');
    const firstNames = first.map((v) => v.metadata.name ?? '').sort();
    const added = (await members('newest')).filter((v) => !firstNames.includes(v.metadata.name ?? ''));
    expect(added).toHaveLength(1);
    expect(Date.parse(added[0].metadata.creationTimestamp ?? '')).toBeGreaterThan(eldest);

    expect((await kubectl(['scale', `${def.plural}.${def.group}`, 'newest', '--replicas=2', '-n', t.w.ns])).code).toBe(0);
    await poolWhen(
      'newest',
      (p) => p.status?.observedGeneration === p.metadata.generation && p.status?.replicas === 2 && condition(p, 'Progressing')?.status === 'False',
      'the scale-down to 2 observed and done',
    );
    expect((await members('newest')).map((v) => v.metadata.name).sort()).toEqual(firstNames);
    // Its disk was owned by the VM: the garbage collector takes it.
    await eventually(
      async () => (await t.c.disks.list({ namespace: t.w.ns })).items.every((d) => d.metadata.name !== `${added[0].metadata.name}-root`),
      'the removed member disk gone',
      // kube-controller-manager's garbage collector, slow on a busy machine.
      120_000,
    );
  }, 300_000);

  it('with scaleDownPolicy Explicit removes nobody on its own', async () => {
    const client = poolClient(mainKube());
    await client.create(pool(t.w, 'explicit', { replicas: 2, scaleDownPolicy: 'Explicit' }));
    await poolWhen('explicit', (p) => p.status?.readyReplicas === 2, '2 ready');
    await client.mergePatch({ namespace: t.w.ns, name: 'explicit' }, { spec: { replicas: 1 } });
    const p = await poolWhen('explicit', (x) => x.status?.observedGeneration === x.metadata.generation, 'observed');
    expect(p.status?.replicas).toBe(2);
    expect(condition(p, 'Progressing')).toMatchObject({ status: 'True', reason: 'ReplicasProgressing' });
    expect(await members('explicit')).toHaveLength(2);
  });

  it('never adopts a VM that only carries its labels', async () => {
    const client = poolClient(mainKube());
    const created = await client.create(pool(t.w, 'guarded', { replicas: 1 }));
    await t.w.createVM('impostor');
    await t.c.vms.mergePatch(
      { namespace: t.w.ns, name: 'impostor' },
      { metadata: { labels: { [POOL_LABELS.pool]: 'guarded', [POOL_LABELS.poolUID]: created.metadata.uid } } },
    );
    const p = await poolWhen('guarded', (x) => x.status?.readyReplicas === 1, '1 ready');
    expect(p.status?.replicas).toBe(1);
    await client.mergePatch({ namespace: t.w.ns, name: 'guarded' }, { spec: { replicas: 0 } });
    await poolWhen('guarded', (x) => x.status?.replicas === 0, 'scaled to 0');
    expect((await t.c.vms.get({ namespace: t.w.ns, name: 'impostor' })).metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('a pool retaining disks (reclaim Retain, keep, ttl)', () => {
  it('keeps the freed disks of removed members, deletes those past ttl beyond keep, and gives a kept one to a new member', async () => {
    const client = poolClient(mainKube());
    const created = await client.create(
      pool(t.w, 'keeper', {
        replicas: 3,
        virtualDiskTemplates: [{ name: 'root', reclaim: { onScaleDown: 'Retain', keep: 1, ttl: '1s' }, spec: { persistentVolumeClaim: { size: '1Gi' } } }],
      }),
    );
    await poolWhen('keeper', (p) => p.status?.readyReplicas === 3, '3 ready');
    const poolDisks = async (): Promise<string[]> =>
      (await t.c.disks.list({ namespace: t.w.ns, labelSelector: `${POOL_LABELS.pool}=keeper` })).items
        .filter((d) => d.metadata.deletionTimestamp === undefined)
        .map((d) => d.metadata.name ?? '')
        .sort();
    const all = await poolDisks();
    expect(all).toHaveLength(3);
    for (const name of all) {
      expect(name).toMatch(/^keeper-root-[a-z0-9]{6}$/);
      expect((await t.c.disks.get({ namespace: t.w.ns, name })).metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'VirtualMachinePool', uid: created.metadata.uid }),
      ]);
    }
    await client.mergePatch({ namespace: t.w.ns, name: 'keeper' }, { spec: { replicas: 1 } });
    // Two disks freed: one stays (keep 1), the other goes after its ttl.
    const kept = await eventually(async () => {
      const left = await poolDisks();
      return left.length === 2 && left;
    }, 'one freed disk deleted past ttl, one kept');
    const used = (await members('keeper')).flatMap((v) => v.spec.blockDeviceRefs.map((r) => r.name));
    const free = kept.filter((d) => !used.includes(d));
    expect(free).toHaveLength(1);
    expect((await t.c.disks.get({ namespace: t.w.ns, name: free[0] })).metadata.annotations?.[POOL_LABELS.freeSince]).toMatch(/Z$/);

    await client.mergePatch({ namespace: t.w.ns, name: 'keeper' }, { spec: { replicas: 2 } });
    await poolWhen('keeper', (p) => p.status?.readyReplicas === 2, '2 ready');
    const refs = (await members('keeper')).flatMap((v) => v.spec.blockDeviceRefs.map((r) => r.name));
    expect(refs).toContain(free[0]);
    expect(await poolDisks()).toEqual(kept);
    const reused = await t.c.disks.get({ namespace: t.w.ns, name: free[0] });
    expect(reused.metadata.annotations?.[POOL_LABELS.freeSince]).toBeUndefined();
  });
});

describe('a pool whose template changes', () => {
  it('patches its members: a label at once (updated), a CPU change waits for a restart (RestartPendingApproval)', async () => {
    const client = poolClient(mainKube());
    await client.create(pool(t.w, 'rollout', { replicas: 2 }));
    const first = await poolWhen('rollout', (p) => p.status?.readyReplicas === 2, '2 ready');
    await client.mergePatch(
      { namespace: t.w.ns, name: 'rollout' },
      { spec: { virtualMachineTemplate: { metadata: { labels: { app: 'rollout', tier: 'b' } } } } },
    );
    const relabelled = await poolWhen(
      'rollout',
      (p) => p.status?.desiredTemplateHash !== first.status?.desiredTemplateHash && p.status?.updatedReplicas === 2,
      'both members on the new template',
    );
    expect(relabelled.status?.conditions?.find((c) => c.type === 'Synced')).toMatchObject({ status: 'True', reason: 'PoolSynced' });
    for (const vm of await members('rollout')) {
      expect(vm.metadata.labels).toMatchObject({ tier: 'b', [POOL_LABELS.templateHash]: relabelled.status?.desiredTemplateHash });
      expect(vm.spec.blockDeviceRefs[0]).toEqual({ kind: 'VirtualDisk', name: `${vm.metadata.name}-root` });
    }

    await client.mergePatch({ namespace: t.w.ns, name: 'rollout' }, { spec: { virtualMachineTemplate: { spec: { cpu: { cores: 4, coreFraction: '50%' } } } } });
    const pending = await poolWhen('rollout', (p) => p.status?.restartPendingReplicas === 2, 'both members await a restart');
    expect(pending.status?.updatedReplicas).toBe(0);
    expect(pending.status?.conditions?.find((c) => c.type === 'Synced')).toMatchObject({ status: 'False', reason: 'RestartPendingApproval' });
    for (const vm of await members('rollout')) {
      expect(vm.spec.cpu.cores).toBe(4);
      // Their own disks are kept through the change.
      expect(vm.spec.blockDeviceRefs[0]).toEqual({ kind: 'VirtualDisk', name: `${vm.metadata.name}-root` });
    }
  });
});
