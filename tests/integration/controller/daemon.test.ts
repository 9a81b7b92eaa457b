import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { leaseDescriptor, leaseSchema, formatMicroTimeFromDate, type RestRequest } from '../../../shared/kube/index.js';
import { runDaemon, type DaemonHandle } from '../../../daemons/controller/daemon.js';
import { freshNamespace } from '../../env/index.js';
import { writesIn, type AuditEvent } from './audit.js';
import { clusterImage, makeClusterImageReady, node, vm, vmClass } from './builders.js';
import { TEST_FIELD_MANAGER, controllerConfig, eventually, mainKube, newScope, type Scope, useCluster } from './fixtures.js';

const t = useCluster();

const LEASE = 'controller-daemon-test';

/**
 * What the daemon did, in the order it did it: every request it handed to its apiserver client, and
 * the moment it learned it had lost the lease (the elector's "stopped leading", logged as the
 * leadership signal aborts). "After the loss" is then an order of events in one process, not a
 * comparison of clocks or of when the apiserver got round to reading a request.
 */
type TraceEvent = { kind: 'request'; method: string; path: string } | { kind: 'lost leadership' };

interface Setup {
  scope: Scope;
  daemon: DaemonHandle;
  trace: TraceEvent[];
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
    // Lease and renew deadline as client-go's defaults: with a 1.5 s renew deadline, a start on a loaded
    // machine (a full run beside stress-ng) outlasted it, and the daemon ended, having lost the lease,
    // before the test saw it lead. A takeover is still noticed within the renew deadline.
    LEADER_ELECTION_LEASE_DURATION: '15s',
    LEADER_ELECTION_RENEW_DEADLINE: '10s',
    LEADER_ELECTION_RETRY_PERIOD: '500ms',
    HEALTH_HOST: '127.0.0.1',
    // The metrics test reads /metrics without a token; the guard is tested in tests/integration/metrics-auth.
    METRICS_AUTH: 'none',
  });
  const trace: TraceEvent[] = [];
  const kube = mainKube(); // the daemon's own client: only its requests are traced
  const send = kube.rest.request.bind(kube.rest);
  kube.rest.request = (req: RestRequest): Promise<unknown> => {
    trace.push({ kind: 'request', method: req.method, path: req.path });
    return send(req);
  };
  const logger = pino(
    { level: 'info' },
    {
      write: (line: string): void => {
        if ((JSON.parse(line) as { msg?: string }).msg === 'stopped leading') trace.push({ kind: 'lost leadership' });
      },
    },
  );
  const stop = new AbortController();
  const daemon = runDaemon({ config, kube, signal: stop.signal, logger });
  t.onCleanup(async () => {
    stop.abort();
    await daemon.done;
    kube.close();
  });
  await eventually(() => daemon.isLeading(), 'leading');
  return { scope, daemon, trace, className: cls.metadata.name ?? '', imageName: cvi.metadata.name ?? '' };
}

const AUDIT_VERB: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** `verb path` of a write, the same for a traced request and for its audit event. */
const writeKey = (verb: string, path: string): string => `${verb} ${path}`;

function countOf(keys: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}

/** The controller's writes in the audit log: same user as the tests, not the tests' field manager. */
async function controllerWrites(namespace: string): Promise<AuditEvent[]> {
  const all = await writesIn(namespace);
  const testUser = all.find((e) => e.requestURI.includes(`fieldManager=${TEST_FIELD_MANAGER}`))?.user?.username;
  return all.filter((e) => e.user?.username === testUser && !e.requestURI.includes(`fieldManager=${TEST_FIELD_MANAGER}`));
}

async function get(port: number, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, text: await res.text() };
}

describe('the controller daemon', () => {
  it('serves health and Prometheus metrics: leadership, reconciles and the VM gauges', async () => {
    const s = await setup('ctl-metrics');
    await t.c.vms.create(
      vm(s.scope, 'measured', s.className, { runPolicy: 'AlwaysOff', blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: s.imageName }] }),
    );
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

  it('sends no write once it knows it lost the lease, and ends with lostLeadership', async () => {
    const s = await setup('ctl-lost');
    const ns = s.scope.namespace;
    const create = (i: number): Promise<unknown> =>
      t.c.vms.create(vm(s.scope, `burst-${i}`, s.className, { runPolicy: 'AlwaysOff', blockDeviceRefs: [{ kind: 'ClusterVirtualImage', name: s.imageName }] }));
    await Promise.all(Array.from({ length: 15 }, (_, i) => create(i)));

    // Another replica takes the lease (as after a partition): this one must notice and stop. It can
    // only learn it at its next renewal; until then it still writes, as any leader whose lease is taken
    // without waiting for it to expire would.
    const leases = t.kube.resource(leaseDescriptor, leaseSchema, TEST_FIELD_MANAGER);
    await eventually(async () => {
      const lease = await leases.get({ namespace: ns, name: LEASE });
      const now = formatMicroTimeFromDate(new Date());
      // A conflict with the holder's renewal just tries again.
      await leases.replace({ ...lease, spec: { ...lease.spec, holderIdentity: 'intruder', renewTime: now, acquireTime: now, leaseDurationSeconds: 3600 } });
      return true;
    }, 'lease taken over');
    await Promise.all(Array.from({ length: 15 }, (_, i) => create(i + 15)));
    const { lostLeadership } = await s.daemon.done;
    expect(lostLeadership).toBe(true);
    expect(s.daemon.isLeading()).toBe(false);

    // Not one write left its client once it knew; reads (the lease, to release it if still its own) may.
    const lostAt = s.trace.findIndex((e) => e.kind === 'lost leadership');
    expect(lostAt).toBeGreaterThan(0);
    const writes = (events: TraceEvent[]): string[] =>
      events.flatMap((e) => (e.kind === 'request' && e.method !== 'GET' ? [writeKey(AUDIT_VERB[e.method] ?? e.method, e.path)] : []));
    expect(writes(s.trace.slice(lostAt + 1))).toEqual([]);

    // What reached the apiserver, even after the loss (a request already on the wire is aborted by the
    // client, but the apiserver may still read it), was sent before it: every write of the controller
    // in the audit log is one it sent while it led.
    const sentWhileLeading = countOf(writes(s.trace.slice(0, lostAt)));
    const received = await eventually(async () => {
      const audited = await controllerWrites(ns);
      return audited.length > 0 && audited;
    }, 'the controller writes in the audit log');
    const unexplained = [...countOf(received.map((e) => writeKey(e.verb, e.requestURI.split('?')[0] ?? ''))).entries()].filter(
      ([key, n]) => n > (sentWhileLeading.get(key) ?? 0),
    );
    expect(unexplained).toEqual([]);

    // And it stays stopped: no request at all since it ended, and a VM created now is never looked at.
    const requestsWhenDone = s.trace.length;
    await create(99);
    expect((await t.c.kvvms.list({ namespace: ns })).items.some((k) => k.metadata.name === 'burst-99')).toBe(false);
    expect((await t.c.vms.get({ namespace: ns, name: 'burst-99' })).status).toBeUndefined();
    expect(s.trace.length).toBe(requestsWhenDone);
  });
});
