import { describe, expect, it } from '@jest/globals';
import { rootLogger } from '../../shared/log/index.js';
import { waitFor } from '../../shared/testing/wait.js';
import { FakeKernel } from './fake-kernel.js';
import { RouteForgeMetrics } from './metrics.js';
import type { VmAddress } from './model.js';
import { Syncer } from './syncer.js';

const log = rootLogger.child({ test: 'syncer' });
log.level = 'silent';

function world(opts: { dryRun?: boolean } = {}): {
  kernel: FakeKernel;
  vms: Map<string, VmAddress>;
  syncer: Syncer;
  metrics: RouteForgeMetrics;
  value: (name: string, labels?: Record<string, string>) => Promise<number>;
} {
  const kernel = new FakeKernel();
  kernel.lookups.set('10.0.0.1', { ok: true, local: true, dev: 'lo', prefsrc: '10.0.0.1' });
  kernel.lookups.set('10.200.0.2', { ok: true, local: false, dev: 'eth0', prefsrc: '10.200.0.1' });
  const vms = new Map<string, VmAddress>([
    ['ns/local', { key: 'ns/local', ip: '10.66.0.5', node: 'a', deleting: false }],
    ['ns/remote', { key: 'ns/remote', ip: '10.66.0.6', node: 'b', deleting: false }],
  ]);
  const nodes = new Map<string, string | undefined>([
    ['a', '10.0.0.1'],
    ['b', '10.200.0.2'],
  ]);
  const metrics = new RouteForgeMetrics();
  const syncer = new Syncer({
    kernel,
    table: 1490,
    localDevice: 'cilium_host',
    dryRun: opts.dryRun ?? false,
    inputs: () => ({ vms: [...vms.values()], nodes, cidrs: ['10.66.0.0/16'] }),
    metrics,
    log,
    retry: { initialMs: 10, maxMs: 10 },
    routingCheckIntervalMs: 0,
  });
  const value = async (name: string, labels: Record<string, string> = {}): Promise<number> => {
    const wanted = Object.entries(labels)
      .map(([k, v]) => `${k}="${v}"`)
      .join(',');
    const line = (await metrics.registry.expose()).split('\n').find((l) => l.startsWith(wanted === '' ? `${name} ` : `${name}{${wanted}} `));
    return Number(line?.split(' ')[1] ?? 0);
  };
  return { kernel, vms, syncer, metrics, value };
}

describe('the syncer', () => {
  it('converges from empty in one batch and then finds nothing to do', async () => {
    const { kernel, syncer, value } = world();
    expect((await syncer.syncOnce()).changes).toHaveLength(4);
    expect(kernel.applied).toHaveLength(1);
    expect((await syncer.syncOnce()).changes).toEqual([]);
    expect(kernel.applied).toHaveLength(1);
    expect(await value('d8_virtualization_route_forge_routes_managed', { kind: 'vm' })).toBe(2);
    expect(await value('d8_virtualization_route_forge_changes_total', { object: 'route', op: 'replace', cause: 'update' })).toBe(3);
    expect(await value('d8_virtualization_route_forge_repairs_total', { object: 'route' })).toBe(0);
  });

  it('counts a route lost in the kernel as a repair, a VM change as an update, a stale route at start as gc', async () => {
    const { kernel, vms, syncer, value } = world();
    kernel.routes.set('10.66.9.9/32', { dst: '10.66.9.9/32', type: 'unicast', gateway: '10.200.0.2', metric: 0 });
    await syncer.syncOnce();
    expect(await value('d8_virtualization_route_forge_changes_total', { object: 'route', op: 'delete', cause: 'gc' })).toBe(1);
    kernel.routes.delete('10.66.0.6/32');
    kernel.rules = [];
    await syncer.syncOnce();
    expect(await value('d8_virtualization_route_forge_repairs_total', { object: 'route' })).toBe(1);
    expect(await value('d8_virtualization_route_forge_repairs_total', { object: 'rule' })).toBe(1);
    vms.set('ns/remote', { key: 'ns/remote', ip: '10.66.0.6', node: 'a', deleting: false });
    vms.delete('ns/local');
    await syncer.syncOnce();
    expect(await value('d8_virtualization_route_forge_repairs_total', { object: 'route' })).toBe(1);
    expect(await value('d8_virtualization_route_forge_changes_total', { object: 'route', op: 'replace', cause: 'update' })).toBe(4);
    expect(await value('d8_virtualization_route_forge_changes_total', { object: 'route', op: 'delete', cause: 'update' })).toBe(1);
  });

  it('applies every other change when the kernel refuses one, and retries that one until it is accepted', async () => {
    const { kernel, syncer, value } = world();
    kernel.refuse.add('cilium_host');
    const stop = new AbortController();
    const running = syncer.run(stop.signal);
    syncer.trigger('start');
    await waitFor(
      'a refused change counted',
      async () => (await value('d8_virtualization_route_forge_kernel_errors_total', { object: 'route', op: 'replace' })) >= 2,
    );
    expect([...kernel.routes.keys()].sort()).toEqual(['10.66.0.0/16 metric 100', '10.66.0.6/32']);
    expect(await value('d8_virtualization_route_forge_pending_changes')).toBe(1);
    kernel.refuse.clear();
    await waitFor('the refused route applied on a retry', () => kernel.routes.has('10.66.0.5/32'));
    stop.abort();
    await running;
    expect(await value('d8_virtualization_route_forge_syncs_total', { result: 'partial' })).toBeGreaterThanOrEqual(2);
  });

  it('writes nothing in dry-run mode and reports the pending changes', async () => {
    const { kernel, syncer, value } = world({ dryRun: true });
    await syncer.syncOnce();
    expect(kernel.applied).toEqual([]);
    expect(await value('d8_virtualization_route_forge_pending_changes')).toBe(4);
  });

  it('coalesces triggers and checks only the lookups when other routes change', async () => {
    const { kernel, syncer } = world();
    const stop = new AbortController();
    const running = syncer.run(stop.signal);
    syncer.trigger('start');
    syncer.trigger('kube');
    await waitFor('the first sync', () => syncer.syncs >= 1);
    await waitFor('idle', () => kernel.reads === syncer.syncs);
    const reads = kernel.reads;
    syncer.trigger('routing');
    await waitFor('a lookup check', () => kernel.lookupReads === 1);
    expect(kernel.reads).toBe(reads);
    kernel.lookups.set('10.200.0.2', { ok: true, local: false, gateway: '10.200.0.254', dev: 'eth0', prefsrc: '10.200.0.1' });
    syncer.trigger('routing');
    await waitFor('a full sync after a changed lookup', () => kernel.routes.get('10.66.0.6/32')?.gateway === '10.200.0.254');
    stop.abort();
    await running;
  });

  it("takes the monitor's echo of its own write for what it is, and any other change of the table for drift", async () => {
    const { syncer } = world();
    await syncer.syncOnce();
    syncer.tableChanged({ deleted: false, key: '10.66.0.6/32' });
    syncer.tableChanged({ deleted: false, key: '10.66.0.0/16 metric 100' });
    expect(syncer.pendingTriggers).toEqual([]);
    syncer.tableChanged({ deleted: false, key: '10.66.7.7/32' });
    expect(syncer.pendingTriggers).toEqual(['table']);
    const other = world().syncer;
    await other.syncOnce();
    other.tableChanged(undefined);
    expect(other.pendingTriggers).toEqual(['table']);
  });

  it('puts a wanted route deleted by someone else back with a one-line write and no full sync, whatever the table holds', async () => {
    const { kernel, syncer, value } = world();
    await syncer.syncOnce();
    kernel.routes.delete('10.66.0.6/32');
    const reads = kernel.reads;
    syncer.tableChanged({ deleted: true, key: '10.66.0.6/32' });
    await waitFor('the route back', () => kernel.routes.has('10.66.0.6/32'));
    expect(kernel.applied.at(-1)).toEqual(['route replace 10.66.0.6/32 via 10.200.0.2 dev eth0 src 10.200.0.1 table 1490']);
    await waitFor('the repair counted', async () => (await value('d8_virtualization_route_forge_repairs_total', { object: 'route' })) === 1);
    expect(kernel.reads).toBe(reads);
    expect(syncer.pendingTriggers).toEqual([]);
    // The monitor's echo of that write is not drift; a deleted route nobody wants is none of a repair's business.
    syncer.tableChanged({ deleted: false, key: '10.66.0.6/32' });
    syncer.tableChanged({ deleted: true, key: '10.66.77.7/32' });
    expect(kernel.applied).toHaveLength(2);
    expect(syncer.pendingTriggers).toEqual(['table']);
  });

  it('puts the routes deleted in one turn back in one batch', async () => {
    const { kernel, syncer } = world();
    await syncer.syncOnce();
    kernel.routes.delete('10.66.0.5/32');
    kernel.routes.delete('10.66.0.6/32');
    syncer.tableChanged({ deleted: true, key: '10.66.0.5/32' });
    syncer.tableChanged({ deleted: true, key: '10.66.0.6/32' });
    await waitFor('both routes back', () => kernel.routes.has('10.66.0.5/32') && kernel.routes.has('10.66.0.6/32'));
    expect(kernel.applied).toHaveLength(2);
    expect(kernel.applied.at(-1)).toHaveLength(2);
  });

  it('leaves a repair the kernel refuses to a full sync, which retries and reports it', async () => {
    const { kernel, syncer, value } = world();
    await syncer.syncOnce();
    kernel.routes.delete('10.66.0.6/32');
    kernel.refuse.add('eth0');
    syncer.tableChanged({ deleted: true, key: '10.66.0.6/32' });
    await waitFor('a full sync asked for', () => syncer.pendingTriggers.includes('table'));
    expect(await value('d8_virtualization_route_forge_repairs_total', { object: 'route' })).toBe(0);
    kernel.refuse.clear();
    const stop = new AbortController();
    const running = syncer.run(stop.signal);
    await waitFor('the route back through the full sync', () => kernel.routes.has('10.66.0.6/32'));
    stop.abort();
    await running;
    expect(await value('d8_virtualization_route_forge_repairs_total', { object: 'route' })).toBe(1);
  });

  it('leaves a burst of drift (a flushed table) to one full sync instead of a write per route', async () => {
    const kernelWorld = world();
    const { kernel, vms, syncer } = kernelWorld;
    for (let i = 0; i < 100; i++) vms.set(`ns/vm-${i}`, { key: `ns/vm-${i}`, ip: `10.66.1.${i}`, node: 'b', deleting: false });
    await syncer.syncOnce();
    for (let i = 0; i < 100; i++) {
      kernel.routes.delete(`10.66.1.${i}/32`);
      syncer.tableChanged({ deleted: true, key: `10.66.1.${i}/32` });
    }
    expect(syncer.pendingTriggers).toEqual(['table']);
    await waitFor('the queued repairs written', () => kernel.applied.length === 2);
    expect(kernel.applied.at(-1)).toHaveLength(64);
    await syncer.syncOnce();
    expect([...kernel.routes.keys()].filter((k) => k.startsWith('10.66.1.'))).toHaveLength(100);
  });

  it('knows the devices its routes go through', async () => {
    const { syncer } = world();
    await syncer.syncOnce();
    expect([syncer.usesDevice('eth0'), syncer.usesDevice('cilium_host'), syncer.usesDevice('lxc1234')]).toEqual([true, true, false]);
  });
});
