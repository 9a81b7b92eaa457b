/**
 * vm-route-forge end to end: the real daemon process (main.ts, config from the environment) against
 * the real apiserver, programming a network namespace made by this test (a node as Cilium leaves it:
 * cilium_host holding the node's CiliumInternalIP, one link towards the other nodes). The test writes
 * CiliumNodes and VM status as Cilium and the controller would, and reads `ip rule` and
 * `ip route show table 1490` inside the namespace.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace } from '../../env/index.js';
import { ClusterWriter, installCiliumNodeCrd } from './cluster.js';
import { createNetns, setUpNode, type TestNetns } from '../../../shared/testing/netns.js';
import { metricValue, spawnRouteForge, type RouteForgeProcess } from './process.js';

const TABLE = 1490;
const id = randomBytes(3).toString('hex');
const node = { a: `rf-a-${id}`, b: `rf-b-${id}`, c: `rf-c-${id}`, d: `rf-d-${id}`, e: `rf-e-${id}` };
const cluster = new ClusterWriter();
let ns = '';
let netns: TestNetns | undefined;
let dryNetns: TestNetns | undefined;
let daemon: RouteForgeProcess | undefined;

/** The routes of the routable VMs, as `ip route show table 1490` prints them. */
const ROUTE = {
  local: '10.166.0.10 dev cilium_host scope link src 10.0.0.1',
  b: '10.166.0.11 via 10.200.0.2 dev veth0 src 10.200.0.1',
  c: '10.166.1.12 via 10.200.0.3 dev veth0 src 10.200.0.1',
  second: '10.167.0.5 via 10.200.0.2 dev veth0 src 10.200.0.1',
};
const BLACKHOLES = ['blackhole 10.166.0.0/16 metric 100', 'blackhole 10.167.0.0/24 metric 100'];
const RULES = ['1490:\tfrom all to 10.166.0.0/16 lookup 1490', '1490:\tfrom all to 10.167.0.0/24 lookup 1490'];

async function tableIs(expected: string[]): Promise<boolean> {
  const now = await netns?.table(TABLE);
  return JSON.stringify(now) === JSON.stringify([...expected].sort());
}

async function waitForTable(what: string, expected: string[]): Promise<void> {
  await waitFor(what, () => tableIs(expected)).catch(async (err: unknown) => {
    throw new Error(
      `${(err as Error).message}\ntable now:\n${(await netns?.table(TABLE))?.join('\n')}\nexpected:\n${[...expected].sort().join('\n')}\nlog:\n${daemon?.logs
        .slice(-30)
        .map((r) => JSON.stringify(r))
        .join('\n')}`,
    );
  });
}

async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  return metricValue((await daemon?.metrics()) ?? '', name, labels) ?? 0;
}

beforeAll(async () => {
  await installCiliumNodeCrd();
  ns = await freshNamespace('route-forge');
  netns = await createNetns();
  await setUpNode(netns, '10.0.0.1');
  // Left from before the start: a route of a VM that is gone, a wrong route for vm-b, and the rule
  // and blackhole of a CIDR that is no longer configured.
  await netns.ip(
    ['-batch', '-'],
    [
      `route add 10.166.9.9/32 via 10.200.0.2 dev veth0 table ${TABLE}`,
      `route add 10.166.0.11/32 via 10.200.0.3 dev veth0 table ${TABLE}`,
      `route add blackhole 10.99.0.0/16 table ${TABLE} metric 100`,
      `rule add to 10.99.0.0/16 lookup ${TABLE} priority ${TABLE}`,
    ].join('\n') + '\n',
  );
  await cluster.node(node.a, '10.0.0.1');
  await cluster.node(node.b, '10.200.0.2');
  await cluster.node(node.c, '10.201.0.7');
  await cluster.node(node.d, undefined);
  await cluster.node(node.e, '10.250.0.1');
  await Promise.all([
    cluster.vm(ns, 'vm-local', { ipAddress: '10.166.0.10', nodeName: node.a }),
    cluster.vm(ns, 'vm-b', { ipAddress: '10.166.0.11', nodeName: node.b }),
    cluster.vm(ns, 'vm-c', { ipAddress: '10.166.1.12', nodeName: node.c }),
    cluster.vm(ns, 'vm-second-cidr', { ipAddress: '10.167.0.5', nodeName: node.b }),
    // Bad input, one VM per reason:
    cluster.vm(ns, 'vm-no-ip', {}),
    cluster.vm(ns, 'vm-no-node', { ipAddress: '10.166.0.20' }),
    cluster.vm(ns, 'vm-outside', { ipAddress: '10.55.0.1', nodeName: node.b }),
    cluster.vm(ns, 'vm-no-internal-ip', { ipAddress: '10.166.0.21', nodeName: node.d }),
    cluster.vm(ns, 'vm-no-cilium-node', { ipAddress: '10.166.0.22', nodeName: `rf-ghost-${id}` }),
    cluster.vm(ns, 'vm-unreachable', { ipAddress: '10.166.0.23', nodeName: node.e }),
    cluster.vm(ns, 'vm-copy', { ipAddress: '10.166.0.11', nodeName: node.c }),
    cluster.vm(ns, 'vm-bad-ip', { ipAddress: '10.166.0.300', nodeName: node.b }),
  ]);
  daemon = await spawnRouteForge({
    NETNS: netns.name,
    WATCH_NAMESPACE: ns,
    VIRTUAL_MACHINE_CIDRS: '10.166.0.0/16,10.167.0.0/24',
    // Repairs must come from the kernel monitor, not from the periodic resync.
    RESYNC_INTERVAL: '1h',
  });
});

afterAll(async () => {
  await daemon?.stop();
  await netns?.remove();
  await dryNetns?.remove();
  await Promise.all(Object.values(node).map((name) => cluster.nodes.delete({ name }).catch(() => undefined)));
  cluster.close();
});

describe('vm-route-forge in a network namespace', () => {
  it('programs exactly one rule and blackhole per CIDR and one route per routable VM, removing what was stale at start', async () => {
    await waitForTable('the table to converge', [...BLACKHOLES, ROUTE.local, ROUTE.b, ROUTE.c, ROUTE.second]);
    expect(await netns?.rules(TABLE)).toEqual(RULES);
    await waitFor('readiness', () => daemon?.ready());
    expect(await metric('d8_virtualization_route_forge_routes_managed', { kind: 'vm' })).toBe(4);
    expect(await metric('d8_virtualization_route_forge_rules_managed')).toBe(2);
    expect(await metric('d8_virtualization_route_forge_changes_total', { object: 'route', op: 'delete', cause: 'gc' })).toBe(2);
    expect(await metric('d8_virtualization_route_forge_changes_total', { object: 'rule', op: 'delete', cause: 'gc' })).toBe(1);
  });

  it('skips each VM it cannot route with a reason, a log line and a metric, and routes the others', async () => {
    const reasons = ['no-ip', 'no-node', 'outside-cidrs', 'no-internal-ip', 'no-cilium-node', 'node-unreachable', 'duplicate-ip', 'invalid-ip'];
    const values = await Promise.all(reasons.map((reason) => metric('d8_virtualization_route_forge_skipped_vms', { reason })));
    expect(Object.fromEntries(reasons.map((r, i) => [r, values[i]]))).toEqual(Object.fromEntries(reasons.map((r) => [r, 1])));
    const skipped = daemon?.logs
      .filter((r) => r['msg'] === 'VM skipped: no route of its own')
      .map((r) => r['reason'])
      .sort();
    expect(skipped).toEqual([...reasons].sort());
  });

  it("moves a VM's route when the VM moves to another node, also to and from this node", async () => {
    await cluster.setStatus(ns, 'vm-b', { nodeName: node.c });
    await waitForTable('vm-b routed to node c', [...BLACKHOLES, ROUTE.local, '10.166.0.11 via 10.200.0.3 dev veth0 src 10.200.0.1', ROUTE.c, ROUTE.second]);
    await cluster.setStatus(ns, 'vm-b', { nodeName: node.a });
    await waitForTable('vm-b routed locally', [...BLACKHOLES, ROUTE.local, '10.166.0.11 dev cilium_host scope link src 10.0.0.1', ROUTE.c, ROUTE.second]);
    await cluster.setStatus(ns, 'vm-b', { nodeName: node.b });
    await waitForTable('vm-b back on node b', [...BLACKHOLES, ROUTE.local, ROUTE.b, ROUTE.c, ROUTE.second]);
  });

  // RESYNC_INTERVAL is an hour here, so each repair below comes from the kernel's change notification
  // (the daemon's netlink monitor), not from a periodic full sync. How fast it is, is a benchmark's
  // question (tests/bench/route-forge.bench.ts, drift repair latency), not a timed test's.
  it("restores a route deleted or changed by hand, and a deleted rule, on the kernel's notification", async () => {
    const expected = [...BLACKHOLES, ROUTE.local, ROUTE.b, ROUTE.c, ROUTE.second];
    const routeRepairs = (): Promise<number> => metric('d8_virtualization_route_forge_repairs_total', { object: 'route' });
    const ruleRepairs = (): Promise<number> => metric('d8_virtualization_route_forge_repairs_total', { object: 'rule' });
    const [routesBefore, rulesBefore] = [await routeRepairs(), await ruleRepairs()];
    const damageThenHealed = async (what: string, damage: string[], healed: () => Promise<boolean>): Promise<void> => {
      await netns?.ip(damage);
      await waitFor(what, healed, { intervalMs: 5 });
    };
    await damageThenHealed('the deleted route back', ['route', 'del', '10.166.1.12/32', 'table', String(TABLE)], () => tableIs(expected));
    await damageThenHealed('the changed route back', ['route', 'replace', '10.166.0.11/32', 'via', '10.200.0.9', 'dev', 'veth0', 'table', String(TABLE)], () =>
      tableIs(expected),
    );
    await damageThenHealed('the blackhole back', ['route', 'del', '10.167.0.0/24', 'table', String(TABLE), 'metric', '100'], () => tableIs(expected));
    await damageThenHealed(
      'the rule back',
      ['rule', 'del', 'priority', String(TABLE), 'to', '10.166.0.0/16', 'lookup', String(TABLE)],
      async () => JSON.stringify(await netns?.rules(TABLE)) === JSON.stringify(RULES),
    );
    await waitFor('the three route repairs counted', async () => (await routeRepairs()) >= routesBefore + 3);
    await waitFor('the rule repair counted', async () => (await ruleRepairs()) >= rulesBefore + 1);
  });

  it('removes a route foreign to the table that appears while it runs', async () => {
    await netns?.ip(['route', 'add', '10.166.7.7/32', 'via', '10.200.0.2', 'dev', 'veth0', 'table', String(TABLE)]);
    await waitForTable('the foreign route gone', [...BLACKHOLES, ROUTE.local, ROUTE.b, ROUTE.c, ROUTE.second]);
  });

  it('keeps retrying a route the kernel refuses while the other VMs are routed', async () => {
    // cilium_host goes away (renamed): the local VM's route names a device that does not exist.
    await netns?.ip(['-batch', '-'], 'link set cilium_host down\nlink set cilium_host name cilium_gone\nlink set cilium_gone up\n');
    await waitFor(
      'a refused change counted',
      async () => (await metric('d8_virtualization_route_forge_kernel_errors_total', { object: 'route', op: 'replace' })) > 0,
    );
    expect(daemon?.logs.some((r) => r['msg'] === 'the kernel refused a change; retrying' && JSON.stringify(r).includes('10.166.0.10/32'))).toBe(true);
    await cluster.vm(ns, 'vm-new', { ipAddress: '10.166.0.30', nodeName: node.b });
    await waitFor('the new VM routed meanwhile', async () => (await netns?.table(TABLE))?.includes('10.166.0.30 via 10.200.0.2 dev veth0 src 10.200.0.1'));
    expect((await netns?.table(TABLE))?.some((l) => l.startsWith('10.166.0.10 '))).toBe(false);
    await netns?.ip(['-batch', '-'], 'link set cilium_gone down\nlink set cilium_gone name cilium_host\nlink set cilium_host up\n');
    await waitForTable('the local route back once cilium_host is', [
      ...BLACKHOLES,
      ROUTE.local,
      ROUTE.b,
      ROUTE.c,
      ROUTE.second,
      '10.166.0.30 via 10.200.0.2 dev veth0 src 10.200.0.1',
    ]);
  });

  it('removes the route of a VM that loses its address or is deleted', async () => {
    await cluster.setStatus(ns, 'vm-new', { ipAddress: null });
    await cluster.vms.delete({ namespace: ns, name: 'vm-second-cidr' });
    await waitForTable('both routes gone', [...BLACKHOLES, ROUTE.local, ROUTE.b, ROUTE.c]);
  });

  it('changes nothing in dry-run mode and reports what it would change', async () => {
    dryNetns = await createNetns('rfdry');
    await setUpNode(dryNetns, '10.0.0.1');
    await dryNetns.ip(['route', 'add', '10.166.9.9/32', 'via', '10.200.0.2', 'dev', 'veth0', 'table', String(TABLE)]);
    const dry = await spawnRouteForge({ NETNS: dryNetns.name, WATCH_NAMESPACE: ns, VIRTUAL_MACHINE_CIDRS: '10.166.0.0/16', DRY_RUN: 'true' });
    try {
      await waitFor('the dry run ready', () => dry.ready());
      const pending = metricValue(await dry.metrics(), 'd8_virtualization_route_forge_pending_changes');
      // One blackhole, three VM routes, one rule and the stale route.
      expect(pending).toBe(6);
      expect(await dryNetns.table(TABLE)).toEqual(['10.166.9.9 via 10.200.0.2 dev veth0']);
      expect(await dryNetns.rules(TABLE)).toEqual([]);
    } finally {
      await dry.stop();
    }
  });
});
