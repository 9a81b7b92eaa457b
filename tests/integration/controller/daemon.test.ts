import { describe, expect, it } from '@jest/globals';
import { leaseDescriptor, leaseSchema, formatMicroTimeFromDate } from '../../../shared/kube/index.js';
import { runDaemon, type DaemonHandle } from '../../../daemons/controller/daemon.js';
import { freshNamespace } from '../../env/index.js';
import { writesSince } from './audit.js';
import { clusterImage, makeClusterImageReady, node, vm, vmClass } from './builders.js';
import { TEST_FIELD_MANAGER, controllerConfig, eventually, newScope, pause, type Scope, useCluster } from './fixtures.js';

const t = useCluster();

const LEASE = 'controller-daemon-test';

interface Setup {
  scope: Scope;
  daemon: DaemonHandle;
  className: string;
  imageName: string;
}

async function setup(prefix: string): Promise<Setup> {
  const scope = newScope(await freshNamespace(prefix));
  const n = await t.c.nodes.create(node(scope, 'n'));
  t.onCleanup(() => t.c.nodes.delete({ name: n.metadata.name ?? '' }));
  const cls = await t.c.classes.create(vmClass(scope, 'c'));
  const cvi = await t.c.clusterImages.create(clusterImage(scope, 'i'));
  await makeClusterImageReady(t.c, cvi.metadata.name ?? '');
  const config = controllerConfig(scope, {
    LEADER_ELECTION: 'true',
    POD_NAME: 'daemon-test',
    POD_NAMESPACE: scope.namespace,
    LEADER_ELECTION_LEASE_NAME: LEASE,
    LEADER_ELECTION_LEASE_DURATION: '2s',
    LEADER_ELECTION_RENEW_DEADLINE: '1500ms',
    LEADER_ELECTION_RETRY_PERIOD: '200ms',
    HEALTH_HOST: '127.0.0.1',
  });
  const stop = new AbortController();
  const daemon = runDaemon({ config, kube: t.kube, signal: stop.signal });
  t.onCleanup(async () => {
    stop.abort();
    await daemon.done;
  });
  await eventually(() => daemon.isLeading(), 'leading');
  return { scope, daemon, className: cls.metadata.name ?? '', imageName: cvi.metadata.name ?? '' };
}

async function get(port: number, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, text: await res.text() };
}

describe('the controller daemon', () => {
  it('serves health and Prometheus metrics: leadership, reconciles and the VM gauges', async () => {
    const s = await setup('ctl-metrics');
    await t.c.vms.create(vm(s.scope, 'measured', s.className, { runPolicy: 'AlwaysOff', blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: s.imageName }] }));
    const created = await eventually(async () => {
      const got = await t.c.vms.get({ namespace: s.scope.namespace, name: 'measured' });
      return got.status?.phase === 'Stopped' && got;
    }, 'VM Stopped');
    const { port } = await s.daemon.health;
    expect((await get(port, '/health/liveness')).status).toBe(200);
    expect((await get(port, '/health/readiness')).status).toBe(200);
    const metrics = await get(port, '/metrics');
    expect(metrics.status).toBe(200);
    const labels = `name="measured",namespace="${s.scope.namespace}",uid="${created.metadata.uid ?? ''}",node=""`;
    expect(metrics.text).toContain(`d8_virtualization_virtualmachine_status_phase{${labels},phase="Stopped"} 1`);
    expect(metrics.text).toContain(`d8_virtualization_virtualmachine_status_phase{${labels},phase="Running"} 0`);
    expect(metrics.text).toContain(`d8_virtualization_virtualmachine_configuration_cpu_cores{${labels}} 2`);
    expect(metrics.text).toContain(`d8_virtualization_virtualmachine_configuration_memory_size_bytes{${labels}} 2147483648`);
    expect(metrics.text).toContain(`d8_virtualization_virtualmachine_configuration_run_policy{${labels},runPolicy="AlwaysOff"} 1`);
    expect(metrics.text).toContain(`leader_election_master_status{name="${LEASE}"} 1`);
    expect(metrics.text).toMatch(/d8_virtualization_controller_reconcile_total\{controller="vm",result="ok"\} [1-9]/);
    expect(metrics.text).toMatch(/d8_virtualization_controller_reconcile_duration_seconds_count\{controller="vm"\} [1-9]/);
    expect(metrics.text).toContain(`d8_virtualization_virtualmachineclass_status_phase{name="${s.className}"`);
    expect((await get(port, '/nothing')).status).toBe(404);
  });

  it('stops writing the moment it loses the lease, and ends with lostLeadership', async () => {
    const s = await setup('ctl-lost');
    const ns = s.scope.namespace;
    const create = (i: number): Promise<unknown> =>
      t.c.vms.create(vm(s.scope, `burst-${i}`, s.className, { runPolicy: 'AlwaysOff', blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: s.imageName }] }));
    await Promise.all(Array.from({ length: 15 }, (_, i) => create(i)));

    // Another replica takes the lease (as after a partition): this one must notice and stop.
    const leases = t.kube.resource(leaseDescriptor, leaseSchema, TEST_FIELD_MANAGER);
    const stolenAt = Date.now();
    await eventually(async () => {
      const lease = await leases.get({ namespace: ns, name: LEASE });
      const now = formatMicroTimeFromDate(new Date());
      // A conflict with the holder's renewal just tries again.
      await leases.replace({ ...lease, spec: { ...lease.spec, holderIdentity: 'intruder', renewTime: now, acquireTime: now, leaseDurationSeconds: 3600 } });
      return true;
    }, 'lease taken over');
    await Promise.all(Array.from({ length: 15 }, (_, i) => create(i + 15)));
    const { lostLeadership } = await s.daemon.done;
    const stoppedAt = Date.now();
    expect(lostLeadership).toBe(true);
    expect(stoppedAt - stolenAt).toBeLessThan(3000);
    expect(s.daemon.isLeading()).toBe(false);

    await create(99);
    await pause(1500);
    // The audit log does show the controller's writes while it led, and none after it stopped.
    expect((await writesSince(ns, stolenAt - 60_000, TEST_FIELD_MANAGER)).length).toBeGreaterThan(0);
    expect(await writesSince(ns, stoppedAt, TEST_FIELD_MANAGER)).toEqual([]);
    expect((await t.c.kvvms.list({ namespace: ns })).items.some((k) => k.metadata.name === 'burst-99')).toBe(false);
    expect((await t.c.vms.get({ namespace: ns, name: 'burst-99' })).status).toBeUndefined();
  });
});
