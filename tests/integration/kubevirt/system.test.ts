/**
 * The system with real KubeVirt: upstream virt-api and virt-controller (v1.6.0) behind our
 * api-rewriter with the install's KubeVirt configuration, kube-scheduler and kwok nodes, our
 * controller, and the simulator only as virt-handler (role node-agent). A user's VM through our API
 * becomes KubeVirt's own VMI and launcher pod, the scheduler places it, the node agent runs it, and
 * it is Running with the address our IPAM gave; a Restart and a live Migrate complete through real
 * KubeVirt objects (the migration target pod made by virt-controller). A VM no node can take stays
 * Pending with the scheduler's message. Without the bpfbridge binding in KubeVirt's configuration the
 * same VM never runs, and says why.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { CREATED_BY_LABEL, MIGRATION_LABEL } from '../../../shared/api/internal/launcher.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { vm as vmOf, vmop } from '../controller/builders.js';
import type { Scope } from '../controller/fixtures.js';
import { dropBpfBridgeBinding } from './real-kubevirt.js';
import { startRealSystem, type RealSystem } from './system-rig.js';

const WAIT = { timeoutMs: 100_000 };

let sys: RealSystem | undefined;
let c: Clients;
let scope: Scope;
let className = '';
let imageName = '';

beforeAll(async () => {
  sys = await startRealSystem('kv-system', { nodes: 2, cidr: '10.66.0.0/24' });
  ({ c, scope, className, imageName } = sys);
}, 300_000);

afterAll(async () => {
  await sys?.stop();
});

const rig = (): RealSystem => {
  if (sys === undefined) throw new Error('the real-KubeVirt system did not start');
  return sys;
};
const until = <T>(name: string, what: string, check: () => Promise<T | undefined>): Promise<T> => rig().until(name, what, check);
const vmWhen: RealSystem['vmWhen'] = (name, what, check) => rig().vmWhen(name, what, check);
const launcherPods: RealSystem['launcherPods'] = (vm) => rig().launcherPods(vm);

/** Wait until operation `op` of VM `name` is Completed. */
const completes = (name: string, op: string, what: string): Promise<true> =>
  until(name, what, async () => (await c.vmops.get({ namespace: scope.namespace, name: op })).status?.phase === 'Completed' || undefined);

describe('our VMs on upstream KubeVirt v1.6.0, the simulator only as node agent', () => {
  it('runs a VM made through our API on a kwok node with its IPAM address, then restarts and live-migrates it through real KubeVirt objects', async () => {
    await c.vms.create(vmOf(scope, 'web', className, { blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: imageName }] }));
    const running = await vmWhen('web', 'Running with an address', (v) => v.status?.phase === 'Running' && (v.status.ipAddress ?? '') !== '');
    expect(running.status?.ipAddress?.startsWith('10.66.0.')).toBe(true);
    const [pod] = await launcherPods('web');
    const vmi = await c.kvvmis.get({ namespace: scope.namespace, name: 'web' });
    // KubeVirt's own virt-controller made the pod (its labels, our IPAM's address) and the scheduler placed it.
    expect(pod?.metadata.labels?.[CREATED_BY_LABEL]).toBe(vmi.metadata.uid);
    expect(pod?.spec.nodeName).toBe(vmi.status?.nodeName);
    expect(vmi.status?.interfaces?.[0]?.ipAddress).toBe(running.status?.ipAddress);
    expect(running.status?.nodeName).toBe(vmi.status?.nodeName);
    // virt-controller's own status patch applies on what the node agent wrote: its JSON Patch tests the
    // conditions as Go shapes them (lastProbeTime null), so the instance becomes Ready (without that
    // shape every such patch was refused and Ready stayed False, GuestNotRunning).
    await until(
      'web',
      'KubeVirt Ready',
      async () =>
        (await c.kvvmis.get({ namespace: scope.namespace, name: 'web' })).status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ||
        undefined,
    );

    await c.vmops.create(vmop(scope, 'restart-web', 'web', 'Restart'));
    await completes('web', 'restart-web', 'the Restart completed');
    const restarted = await c.kvvmis.get({ namespace: scope.namespace, name: 'web' });
    expect(restarted.metadata.uid).not.toBe(vmi.metadata.uid);
    const again = await vmWhen('web', 'Running again', (v) => v.status?.phase === 'Running');
    // virt-api's mutator filled the template's architecture and firmware UUID: our controller keeps
    // them (the restarted guest has the same SMBIOS identity) and does not read them as a change of
    // its own (a running VM awaiting a restart for nothing).
    const internal = await c.kvvms.get({ namespace: scope.namespace, name: 'web' });
    expect(internal.spec.template.spec['architecture']).toBe('amd64');
    const uuid = internal.spec.template.spec.domain.firmware?.['uuid'];
    expect(typeof uuid).toBe('string');
    expect(restarted.spec.domain.firmware?.['uuid']).toBe(uuid);
    expect(again.status?.conditions?.find((x) => x.type === 'AwaitingRestartToApplyConfiguration')).toBeUndefined();
    expect(again.status?.restartAwaitingChanges ?? []).toEqual([]);

    const before = restarted.status?.nodeName;
    await c.vmops.create(vmop(scope, 'migrate-web', 'web', 'Migrate'));
    await completes('web', 'migrate-web', 'the Migrate completed');
    const moved = await c.kvvmis.get({ namespace: scope.namespace, name: 'web' });
    expect(moved.status?.nodeName).not.toBe(before);
    expect(moved.status?.migrationState?.completed).toBe(true);
    // The target pod is virt-controller's: it carries the migration's uid.
    const target = (await launcherPods('web')).find((p) => p.metadata.labels?.[MIGRATION_LABEL] === moved.status?.migrationState?.migrationUid);
    expect(target?.spec.nodeName).toBe(moved.status?.nodeName);
    await vmWhen('web', `Running on ${moved.status?.nodeName ?? ''}`, (v) => v.status?.phase === 'Running' && v.status.nodeName === moved.status?.nodeName);

    // A second migration of the same instance: virt-controller's hand-off tests the finished migration
    // state as Go shapes it (no false or empty fields), so it is handed off and completes too.
    await c.vmops.create(vmop(scope, 'migrate-web-again', 'web', 'Migrate'));
    await completes('web', 'migrate-web-again', 'the second Migrate completed');
    expect((await c.kvvmis.get({ namespace: scope.namespace, name: 'web' })).status?.nodeName).toBe(before);
  }, 420_000);

  it("keeps a VM no node can take Pending, with the scheduler's reason and message, as the original", async () => {
    await c.vms.create(
      vmOf(scope, 'nowhere', className, {
        blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: imageName }],
        nodeSelector: { 'example.com/no-such-node': 'true' },
      }),
    );
    // virt-controller copies the launcher pod's PodScheduled=False onto the instance; the VM shows it.
    const stuck = await vmWhen('nowhere', 'Running=False PodNotStarted, Unschedulable', (v) =>
      (v.status?.conditions ?? []).some((x) => x.type === 'Running' && x.reason === 'PodNotStarted' && x.message.startsWith('Unschedulable: ')),
    );
    expect(stuck.status?.phase).toBe('Pending');
    expect(stuck.status?.conditions?.find((x) => x.type === 'Running')?.message).toMatch(/^Unschedulable: 0\/2 nodes are available: .*node affinity\/selector/);
    expect((await launcherPods('nowhere')).map((p) => p.spec.nodeName ?? '')).toEqual(['']);
    await c.vms.delete({ namespace: scope.namespace, name: 'nowhere' });
  });

  it('never runs a VM while KubeVirt lacks the bpfbridge binding, and says why', async () => {
    await dropBpfBridgeBinding(rig().kv, WAIT.timeoutMs);
    await c.vms.create(vmOf(scope, 'nobinding', className, { blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: imageName }] }));
    const condition = await waitFor(
      'the VMI to say why it has no pod',
      async () => {
        const vmi = await c.kvvmis.get({ namespace: scope.namespace, name: 'nobinding' }).catch(() => undefined);
        return vmi?.status?.conditions?.find((x) => x.type === 'Synchronized' && x.status === 'False');
      },
      WAIT,
    );
    expect(condition.message).toContain('bpfbridge');
    expect(await launcherPods('nobinding')).toEqual([]);
    // The VM says it too, as the original: PodNotStarted with virt-controller's FailedCreate, still Pending.
    const refused = await vmWhen('nobinding', 'Running=False PodNotStarted', (v) =>
      (v.status?.conditions ?? []).some((x) => x.type === 'Running' && x.status === 'False' && x.reason === 'PodNotStarted'),
    );
    expect(refused.status?.phase).toBe('Pending');
    expect(refused.status?.conditions?.find((x) => x.type === 'Running')?.message).toMatch(/^Failed to start pod: .*FailedCreate: .*bpfbridge/);
  });
});
