import { describe, expect, it } from '@jest/globals';
import { POOL_LABELS, type VirtualMachinePool } from '../../../shared/api/resources/vmpool.js';
import { kubectl } from '../../env/index.js';
import { eventually, mainKube } from './fixtures.js';
import { makeAllDisksReady, pool, poolClient } from './pool-world.js';
import { useWorld } from './world.js';

const t = useWorld('ctl-pool-bad', { env: { DEPENDENCY_RECHECK_INTERVAL: '500ms' } });

const progressing = (p: VirtualMachinePool): string => p.status?.conditions?.find((c) => c.type === 'Progressing')?.message ?? '';

async function setDiskQuota(count: number): Promise<void> {
  const quota = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'disks', namespace: t.w.ns },
    spec: { hard: { 'count/virtualdisks.virtualization.deckhouse.io': String(count) } },
  };
  const res = await kubectl(['apply', '-f', '-'], { stdin: JSON.stringify(quota) });
  if (res.code !== 0) throw new Error(res.stderr);
  // The quota admits nothing until kube-controller-manager has counted its usage.
  await eventually(async () => {
    const got = await kubectl(['get', 'resourcequota', 'disks', '-n', t.w.ns, '-o', 'json']);
    const status = (JSON.parse(got.stdout) as { status?: { hard?: Record<string, string>; used?: Record<string, string> } }).status;
    const key = 'count/virtualdisks.virtualization.deckhouse.io';
    return status?.hard?.[key] === String(count) && status.used?.[key] !== undefined;
  }, `quota of ${count} disks counted`);
}

describe('a pool whose disks cannot all be made', () => {
  it('names the replica and why in its status, runs the other replica, and converges once disks can be made', async () => {
    await setDiskQuota(1);
    const client = poolClient(mainKube());
    await client.create(pool(t.w, 'quota', { replicas: 2 }));
    const stuck = await eventually(async () => {
      await makeAllDisksReady(t.c, t.w.ns);
      const p = await client.get({ namespace: t.w.ns, name: 'quota' });
      return p.status?.readyReplicas === 1 && /exceeded quota/.test(progressing(p)) && p;
    }, 'one replica running, the other reported');
    const members = (await t.c.vms.list({ namespace: t.w.ns, labelSelector: `${POOL_LABELS.pool}=quota` })).items;
    expect(members).toHaveLength(2);
    const disks = new Set((await t.c.disks.list({ namespace: t.w.ns })).items.map((d) => d.metadata.name));
    const starved = members.find((m) => !disks.has(`${m.metadata.name}-root`));
    const running = members.find((m) => disks.has(`${m.metadata.name}-root`));
    expect(progressing(stuck)).toContain(`replica ${starved?.metadata.name}: VirtualDisk ${starved?.metadata.name}-root (template root) could not be created:`);
    expect(progressing(stuck)).not.toContain(`replica ${running?.metadata.name}`);
    expect((await t.c.vms.get({ namespace: t.w.ns, name: running?.metadata.name ?? '' })).status?.phase).toBe('Running');
    expect(stuck.status?.conditions?.find((c) => c.type === 'Available')).toMatchObject({ status: 'False', reason: 'InsufficientReadyReplicas' });

    await setDiskQuota(10);
    const healed = await eventually(async () => {
      await makeAllDisksReady(t.c, t.w.ns);
      const p = await client.get({ namespace: t.w.ns, name: 'quota' });
      return p.status?.readyReplicas === 2 && p;
    }, 'both replicas running once the quota allows');
    expect(progressing(healed)).not.toContain('could not be created');
  });
});
