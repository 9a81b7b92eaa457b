/**
 * Evacuation beside upstream KubeVirt's virt-controller and virt-api (v1.6.0, the install's
 * configuration): a drain-like eviction of a VM's launcher pod (made by virt-controller, placed by the
 * scheduler) is refused by real virt-api's eviction interceptor (registered as virt-operator registers
 * it, through the api-rewriter's webhook proxy), which marks the instance; our controller's Evict operation
 * migrates the VM, and that is the only migration: virt-controller's own evacuation controller,
 * which answers the same mark with a `kubevirt-evacuation-*` migration, has no workers (the install's
 * `evacuation-controller-threads: '0'`; the original patches that controller out). The VM has
 * migrated once before, as the demo's has: virt-controller's patches of an instance test the
 * migration state it read, which the node agent must store as KubeVirt's own handler would.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EVACUATION_ANNOTATION, EVACUATION_PREFIX } from '../../../daemons/controller/reconcilers/evacuation/reconciler.js';
import { EVICTION_INTERCEPTOR, EVICTION_INTERCEPTOR_PATH, installFlags } from '../../../platform/kubevirt.js';
import { KubeApiError } from '../../../shared/errors/index.js';
import { vm as vmOf, vmop } from '../controller/builders.js';
import { evictPod } from '../controller/eviction-webhook.js';
import { startRealSystem, type RealSystem } from './system-rig.js';

let sys: RealSystem | undefined;

beforeAll(async () => {
  sys = await startRealSystem('kv-evac', { nodes: 2, cidr: '10.66.1.0/24' });
}, 300_000);

afterAll(async () => {
  await sys?.stop();
});

const rig = (): RealSystem => {
  if (sys === undefined) throw new Error('the real-KubeVirt system did not start');
  return sys;
};

const refusal = (answer: unknown): string | undefined => (answer instanceof KubeApiError && answer.status === 429 ? answer.message : undefined);

describe('evacuation beside upstream KubeVirt v1.6.0', () => {
  it("migrates a drained VM with our Evict operation's migration only, which completes; EvictionRequired goes", async () => {
    const { c, scope, className, imageName, kube } = rig();
    const ns = scope.namespace;
    // virt-controller runs as the install says: no evacuation workers.
    expect(rig().kv.controllerLog()).toContain('evacuation 0');
    expect(installFlags('controller')).toContain('--evacuation-controller-threads');

    await c.vms.create(vmOf(scope, 'drained', className, { blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: imageName }] }));
    const running = await rig().vmWhen(
      'drained',
      'Running and migratable',
      (v) => v.status?.phase === 'Running' && v.status.conditions?.some((x) => x.type === 'Migratable' && x.status === 'True') === true,
    );
    // A live Migrate first: the evacuation is the instance's second migration.
    await c.vmops.create(vmop(scope, 'first-move', 'drained', 'Migrate'));
    await rig().until(
      'drained',
      'the Migrate Completed',
      async () => (await c.vmops.get({ namespace: ns, name: 'first-move' })).status?.phase === 'Completed' || undefined,
    );
    const migrated = await rig().vmWhen(
      'drained',
      'Running after the Migrate',
      (v) => v.status?.phase === 'Running' && v.status.nodeName !== running.status?.nodeName,
    );
    const from = migrated.status?.nodeName ?? '';
    const pod = (await rig().launcherPods('drained')).find((p) => p.spec.nodeName === from && p.status?.phase === 'Running');
    const podName = pod?.metadata.name ?? '';
    expect(podName).not.toBe('');

    // The interceptor is real virt-api's, through the rewriter's webhook proxy (no stand-in runs here).
    const hooks = JSON.parse(await rig().kv.ok(['get', 'validatingwebhookconfigurations', '-o', 'json'])) as {
      items: { webhooks?: { name: string; clientConfig: { url?: string }; failurePolicy?: string }[] }[];
    };
    const interceptors = hooks.items.flatMap((h) => h.webhooks ?? []).filter((w) => w.name === EVICTION_INTERCEPTOR);
    expect(interceptors).toEqual([
      expect.objectContaining({
        failurePolicy: 'Fail',
        clientConfig: { url: `https://127.0.0.1:${rig().kv.plan.ports.webhookProxy}${EVICTION_INTERCEPTOR_PATH}`, caBundle: expect.any(String) as unknown },
      }),
    ]);
    // A dry run is refused the same way and marks nothing.
    expect(refusal(await evictPod(kube, ns, podName, { dryRun: true }))).toContain(`Eviction triggered evacuation of VMI "${ns}/drained"`);
    expect((await c.kvvmis.get({ namespace: ns, name: 'drained' })).status?.evacuationNodeName).toBeUndefined();

    const first = refusal(await evictPod(kube, ns, podName));
    expect(first).toContain(`Eviction triggered evacuation of VMI "${ns}/drained"`);
    const op = await rig().until('drained', 'an evacuation operation Completed', async () =>
      (await c.vmops.list({ namespace: ns })).items.find((o) => o.spec.type === 'Evict' && o.status?.phase === 'Completed'),
    );
    expect(op.metadata.name?.startsWith(EVACUATION_PREFIX)).toBe(true);
    expect(op.metadata.annotations?.[EVACUATION_ANNOTATION]).toBe('true');
    const moved = await rig().vmWhen(
      'drained',
      'Running on the other node without EvictionRequired',
      (v) => v.status?.phase === 'Running' && v.status.nodeName !== from && !v.status.conditions?.some((x) => x.type === 'EvictionRequired'),
    );
    expect(moved.status?.nodeName).not.toBe(from);

    // No migration but the two operations' (none of KubeVirt's own evacuation), and both succeeded.
    const migrations = (await c.migrations.list({ namespace: ns })).items.filter((m) => m.spec.vmiName === 'drained');
    expect(migrations.map((m) => m.metadata.name).sort()).toEqual([`vmop-${op.metadata.name ?? ''}`, 'vmop-first-move']);
    expect(migrations.map((m) => m.status?.['phase'])).toEqual(['Succeeded', 'Succeeded']);
    const vmi = await c.kvvmis.get({ namespace: ns, name: 'drained' });
    expect(vmi.status?.evacuationNodeName).toBeUndefined();
    expect((await c.vmops.list({ namespace: ns })).items.filter((o) => o.spec.type === 'Evict')).toHaveLength(1);
  }, 420_000);
});
