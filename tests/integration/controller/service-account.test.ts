/**
 * The controller under exactly the RBAC the install gives it: the component manifest
 * (knative/rbac/components/controller.yaml) is applied, and the controller's client impersonates its
 * ServiceAccount. A rule missing from the manifest makes a step below fail with 403.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { KubeClient } from '../../../shared/kube/index.js';
import { launcherPods } from '../../../daemons/controller/kube/launcher.js';
import { coreEvents, makeClients, type Pod } from '../../../daemons/controller/kube/resources.js';
import { impersonatingKubeConfig, kubectl } from '../../env/index.js';
import { vm, vmop } from './builders.js';
import { eventually, gone, useCluster } from './fixtures.js';
import { startStoryWorld } from './story-world.js';

const KNATIVE = fileURLToPath(new URL('../../../knative/', import.meta.url));
const SERVICE_ACCOUNT = 'system:serviceaccount:d8-virtualization:controller';

/** A client that acts as the controller's ServiceAccount. */
function serviceAccountKube(): KubeClient {
  return new KubeClient(impersonatingKubeConfig(SERVICE_ACCOUNT));
}

async function ok(args: string[]): Promise<void> {
  const res = await kubectl(args);
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${res.stderr}`);
}

const t = useCluster();

beforeAll(async () => {
  await ok(['apply', '--server-side', '--force-conflicts', '--field-manager=controller-rbac-test', '-f', `${KNATIVE}namespace.yaml`]);
  await ok(['apply', '--server-side', '--force-conflicts', '--field-manager=controller-rbac-test', '-f', `${KNATIVE}rbac/components/controller.yaml`]);
});

describe('the controller with only its own ServiceAccount rights', () => {
  it('is denied what its role does not grant (the impersonation is in effect)', async () => {
    const denied = await kubectl(['auth', 'can-i', 'delete', 'nodes'], { asUser: SERVICE_ACCOUNT });
    expect(denied.stdout.trim()).toBe('no');
    const allowed = await kubectl(['auth', 'can-i', 'patch', 'virtualmachines.virtualization.deckhouse.io', '--subresource=status', '-n', 'any'], {
      asUser: SERVICE_ACCOUNT,
    });
    expect(allowed.stdout.trim()).toBe('yes');
  });

  it("reads a launcher pod's events, as the VM handler does for a pod being created (a 403 would throw)", async () => {
    const kube = serviceAccountKube();
    t.onCleanup(() => Promise.resolve(kube.close()));
    const pod: Pod = { metadata: { namespace: 'any', name: 'virt-launcher-web-abcde' } };
    expect(await launcherPods(makeClients(kube).pods, coreEvents(kube)).volumeError(pod, new AbortController().signal)).toBeUndefined();
  });

  it('elects itself, builds and runs a VM with an IP, restarts it by operation and cleans up', async () => {
    const kube = serviceAccountKube();
    t.onCleanup(() => Promise.resolve(kube.close()));
    const suffix = randomBytes(3).toString('hex');
    const { scope, ns, nodeName, className, kubevirt } = await startStoryWorld(t, {
      prefix: 'ctl-sa',
      controllerKube: kube,
      env: {
        // The certificate manager too, under names of this test's own.
        CERT_ISSUER: 'self',
        CERT_CA_SECRET: `ctl-sa-ca-${suffix}`,
        CERT_SERVING_SECRETS: `ctl-sa-tls-${suffix}:admission-webhook`,
        CERT_CLIENT_SECRETS: `ctl-sa-client-${suffix}:virtualization-api-proxy`,
        LEADER_ELECTION: 'true',
        POD_NAMESPACE: 'd8-virtualization',
        LEADER_ELECTION_LEASE_NAME: `ctl-sa-${randomBytes(3).toString('hex')}`,
        VIRTUAL_MACHINE_CIDRS: '10.202.0.0/24',
        VIRTUAL_MACHINE_IP_LEASES_RETENTION_DURATION: '0s',
      },
    });
    await eventually(async () => (await t.c.classes.get({ name: className })).status?.phase === 'Ready', 'class Ready');
    const serving = await eventually(() => t.c.secrets.get({ namespace: 'd8-virtualization', name: `ctl-sa-tls-${suffix}` }), 'serving Secret issued');
    expect(Object.keys(serving.data ?? {}).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);

    const blockDeviceRefs = [
      { kind: 'VirtualImage' as const, name: 'ubuntu' },
      { kind: 'VirtualDisk' as const, name: 'data' },
    ];
    await t.c.vms.create(vm(scope, 'web', className, { blockDeviceRefs }));
    await eventually(() => t.c.kvvms.get({ namespace: ns, name: 'web' }), 'internal VM created', 30_000);
    await kubevirt.start();
    await eventually(async () => (await t.c.vms.get({ namespace: ns, name: 'web' })).status?.phase === 'Starting', 'VM Starting');
    await kubevirt.run('web', nodeName);
    const running = await eventually(async () => {
      const got = await t.c.vms.get({ namespace: ns, name: 'web' });
      return got.status?.phase === 'Running' && got;
    }, 'VM Running');
    expect(running.status?.ipAddress).toMatch(/^10\.202\.0\.\d+$/);

    const first = await t.c.kvvmis.get({ namespace: ns, name: 'web' });
    await t.c.vmops.create(vmop(scope, 'restart', 'web', 'Restart'));
    await eventually(async () => (await t.c.kvvmis.get({ namespace: ns, name: 'web' })).metadata.uid !== first.metadata.uid, 'a new instance');
    await kubevirt.run('web', nodeName);
    await eventually(async () => (await t.c.vmops.get({ namespace: ns, name: 'restart' })).status?.phase === 'Completed', 'restart Completed');

    await t.c.vms.delete({ namespace: ns, name: 'web' });
    await eventually(() => gone(() => t.c.vms.get({ namespace: ns, name: 'web' })), 'VM gone');
    expect(await gone(() => t.c.kvvms.get({ namespace: ns, name: 'web' }))).toBe(true);
  }, 90_000);
});
