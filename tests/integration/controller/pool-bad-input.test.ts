import { describe, expect, it } from '@jest/globals';
import { POOL_LABELS, type VirtualMachinePool } from '../../../shared/api/resources/vmpool.js';
import { kubectl } from '../../env/index.js';
import { eventually, mainKube } from './fixtures.js';
import { makeAllDisksReady, pool, poolClient } from './pool-world.js';
import { useWorld } from './world.js';

const t = useWorld('ctl-pool-bad', { env: { DEPENDENCY_RECHECK_INTERVAL: '500ms' } });

const progressing = (p: VirtualMachinePool): string => p.status?.conditions?.find((c) => c.type === 'Progressing')?.message ?? '';

/**
 * A cluster policy (ValidatingAdmissionPolicy, judged by the apiserver itself) that refuses new
 * VirtualDisks in the test's namespace: what a platform team's policy or an exhausted quota does.
 */
async function refuseNewDisks(on: boolean): Promise<void> {
  const name = `no-disks-${t.w.ns}`;
  if (!on) {
    for (const kind of ['validatingadmissionpolicybinding', 'validatingadmissionpolicy']) await kubectl(['delete', kind, name, '--ignore-not-found']);
    return;
  }
  const manifests = [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [{ apiGroups: ['virtualization.deckhouse.io'], apiVersions: ['*'], operations: ['CREATE'], resources: ['virtualdisks'] }],
        },
        validations: [{ expression: 'false', message: 'new disks are frozen in this namespace' }],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name },
      spec: {
        policyName: name,
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': t.w.ns } } },
      },
    },
  ];
  const res = await kubectl(['apply', '-f', '-'], { stdin: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }) });
  if (res.code !== 0) throw new Error(res.stderr);
  // The apiserver loads a new policy a moment later: a dry-run create shows when it is in force.
  const probe = { apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualDisk', metadata: { name: 'probe', namespace: t.w.ns }, spec: {} };
  await eventually(async () => {
    const tried = await kubectl(['create', '--dry-run=server', '-f', '-'], { stdin: JSON.stringify(probe) });
    return tried.code !== 0 && tried.stderr.includes('new disks are frozen');
  }, 'the policy in force');
}

describe('a pool whose disks cannot all be made', () => {
  it('names the replica and why in its status, keeps the other replica running, and converges once disks can be made', async () => {
    const client = poolClient(mainKube());
    await client.create(pool(t.w, 'frozen', { replicas: 1 }));
    await eventually(async () => {
      await makeAllDisksReady(t.c, t.w.ns);
      return (await client.get({ namespace: t.w.ns, name: 'frozen' })).status?.readyReplicas === 1;
    }, 'the first replica running');
    const [running] = (await t.c.vms.list({ namespace: t.w.ns, labelSelector: `${POOL_LABELS.pool}=frozen` })).items;

    await refuseNewDisks(true);
    try {
      await client.mergePatch({ namespace: t.w.ns, name: 'frozen' }, { spec: { replicas: 2 } });
      const stuck = await eventually(async () => {
        const p = await client.get({ namespace: t.w.ns, name: 'frozen' });
        return p.status?.replicas === 2 && /new disks are frozen/.test(progressing(p)) && p;
      }, 'the second replica reported');
      const starved = (await t.c.vms.list({ namespace: t.w.ns, labelSelector: `${POOL_LABELS.pool}=frozen` })).items.find(
        (m) => m.metadata.name !== running?.metadata.name,
      );
      expect(progressing(stuck)).toContain(
        `replica ${starved?.metadata.name}: VirtualDisk ${starved?.metadata.name}-root (template root) could not be created:`,
      );
      expect(progressing(stuck)).not.toContain(`replica ${running?.metadata.name}`);
      expect(stuck.status?.readyReplicas).toBe(1);
      expect((await t.c.vms.get({ namespace: t.w.ns, name: running?.metadata.name ?? '' })).status?.phase).toBe('Running');
      expect(stuck.status?.conditions?.find((c) => c.type === 'Available')).toMatchObject({ status: 'False', reason: 'InsufficientReadyReplicas' });
    } finally {
      await refuseNewDisks(false);
    }
    const healed = await eventually(async () => {
      await makeAllDisksReady(t.c, t.w.ns);
      const p = await client.get({ namespace: t.w.ns, name: 'frozen' });
      return p.status?.readyReplicas === 2 && p;
    }, 'both replicas running once disks can be made');
    expect(progressing(healed)).not.toContain('could not be created');
  });
});
