import { describe, expect, it } from '@jest/globals';
import { API_VERSION } from '../../../shared/api/resources/common.js';
import type { VirtualMachineIPAddress, VirtualMachineIPAddressLease } from '../../../shared/api/resources/addresses.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import { VMIP_UID_LABEL } from '../../../daemons/controller/reconcilers/ipam/allocate.js';
import { freshNamespace } from '../../env/index.js';
import { statusPatches } from './audit.js';
import { eventually, newScope, readWhen, startTestController, type Scope, type TestController, useCluster } from './fixtures.js';
import { startWorld } from './world.js';

const t = useCluster();

async function controllerFor(prefix: string, env: Record<string, string>): Promise<{ scope: Scope; ctl: TestController }> {
  const scope = newScope(await freshNamespace(prefix));
  const ctl = await startTestController(t.kube, scope, env);
  t.onCleanup(() => ctl.stop());
  return { scope, ctl };
}

function address(scope: Scope, name: string, spec: VirtualMachineIPAddress['spec']): VirtualMachineIPAddress {
  return { apiVersion: API_VERSION, kind: 'VirtualMachineIPAddress', metadata: { name, namespace: scope.namespace }, spec };
}

async function vmipWhen(
  scope: Scope,
  name: string,
  check: (ip: VirtualMachineIPAddress) => boolean,
  what: string,
  timeoutMs?: number,
): Promise<VirtualMachineIPAddress> {
  return readWhen(() => t.c.vmips.get({ namespace: scope.namespace, name }), check, `${name}: ${what}`, timeoutMs);
}

async function leaseOf(name: string): Promise<VirtualMachineIPAddressLease | undefined> {
  try {
    return await t.c.leases.get({ name });
  } catch (err: unknown) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

const bound = (ip: VirtualMachineIPAddress): boolean => ip.status?.phase === 'Bound';
const boundReason = (ip: VirtualMachineIPAddress): string | undefined => ip.status?.conditions?.find((x) => x.type === 'Bound')?.reason;

describe('IP address management', () => {
  it('gives Auto addresses the first free ones of the CIDRs, each under its own lease, never twice', async () => {
    const { scope } = await controllerFor('ctl-ipam-auto', { VIRTUAL_MACHINE_CIDRS: '10.203.0.0/30,10.203.1.0/27' });
    const names = Array.from({ length: 12 }, (_, i) => `auto-${i}`);
    await Promise.all(names.map((n) => t.c.vmips.create(address(scope, n, { type: 'Auto' }))));
    const ips = await Promise.all(names.map((n) => vmipWhen(scope, n, bound, 'Bound')));
    const addresses = ips.map((ip) => ip.status?.address ?? '');
    expect(new Set(addresses).size).toBe(12);
    // The /30 gives .1 and .2 (network and broadcast skipped), then the /27 from .1.
    expect(addresses).toEqual(expect.arrayContaining(['10.203.0.1', '10.203.0.2', '10.203.1.1']));
    expect(addresses).not.toContain('10.203.0.0');
    expect(addresses).not.toContain('10.203.0.3');
    const lease = await leaseOf('ip-10-203-0-1');
    const holder = ips.find((ip) => ip.status?.address === '10.203.0.1');
    expect(lease?.spec.virtualMachineIPAddressRef).toEqual({ namespace: scope.namespace, name: holder?.metadata.name });
    expect(lease?.metadata.labels?.[VMIP_UID_LABEL]).toBe(holder?.metadata.uid);
    await eventually(async () => (await leaseOf('ip-10-203-0-1'))?.status?.phase === 'Bound', 'lease Bound');
    expect(holder?.status?.conditions?.find((x) => x.type === 'Attached')).toMatchObject({ status: 'False', reason: 'VirtualMachineNotFound' });
  });

  it('binds a Static address inside the CIDRs and refuses one outside, the network address and one already leased', async () => {
    const { scope } = await controllerFor('ctl-ipam-static', { VIRTUAL_MACHINE_CIDRS: '10.204.0.0/24' });
    await t.c.vmips.create(address(scope, 'fixed', { type: 'Static', staticIP: '10.204.0.50' }));
    expect((await vmipWhen(scope, 'fixed', bound, 'Bound')).status?.address).toBe('10.204.0.50');
    for (const [name, ip] of [
      ['outside', '10.99.0.1'],
      ['network', '10.204.0.0'],
      ['broadcast', '10.204.0.255'],
    ] as const) {
      await t.c.vmips.create(address(scope, name, { type: 'Static', staticIP: ip }));
      const refused = await vmipWhen(scope, name, (x) => boundReason(x) !== undefined, 'Bound condition');
      expect(boundReason(refused)).toBe('VirtualMachineIPAddressIsOutOfTheValidRange');
      expect(refused.status?.phase).toBe('Pending');
    }
    await t.c.vmips.create(address(scope, 'dup', { type: 'Static', staticIP: '10.204.0.50' }));
    const dup = await vmipWhen(scope, 'dup', (x) => boundReason(x) !== undefined, 'Bound condition');
    expect(boundReason(dup)).toBe('VirtualMachineIPAddressLeaseAlreadyExists');
    expect(dup.status?.conditions?.find((x) => x.type === 'Bound')?.message).toContain(`${scope.namespace}/fixed`);
  });

  it('releases the lease of a deleted address, lets the same namespace take it over, and deletes it after retention', async () => {
    const { scope } = await controllerFor('ctl-ipam-release', { VIRTUAL_MACHINE_CIDRS: '10.205.0.0/24', VIRTUAL_MACHINE_IP_LEASES_RETENTION_DURATION: '3s' });
    await t.c.vmips.create(address(scope, 'first', { type: 'Static', staticIP: '10.205.0.7' }));
    await vmipWhen(scope, 'first', bound, 'Bound');
    await t.c.vmips.delete({ namespace: scope.namespace, name: 'first' });
    const released = await eventually(async () => {
      const l = await leaseOf('ip-10-205-0-7');
      return l?.status?.phase === 'Released' && l;
    }, 'lease Released');
    expect(released.spec.virtualMachineIPAddressRef).toEqual({ namespace: scope.namespace, name: '' });
    expect(released.status?.conditions?.find((x) => x.type === 'Bound')).toMatchObject({ status: 'False', reason: 'Released' });

    await t.c.vmips.create(address(scope, 'second', { type: 'Static', staticIP: '10.205.0.7' }));
    await vmipWhen(scope, 'second', bound, 'Bound by take-over');
    const taken = await leaseOf('ip-10-205-0-7');
    expect(taken?.spec.virtualMachineIPAddressRef?.name).toBe('second');
    expect(taken?.metadata.uid).toBe(released.metadata.uid);

    await t.c.vmips.delete({ namespace: scope.namespace, name: 'second' });
    await eventually(async () => (await leaseOf('ip-10-205-0-7'))?.status?.phase === 'Released', 'Released again');
    await eventually(async () => (await leaseOf('ip-10-205-0-7')) === undefined, 'lease deleted after retention', 15_000);
  });

  it('refuses a Released lease to another namespace', async () => {
    const a = await controllerFor('ctl-ipam-ns-a', { VIRTUAL_MACHINE_CIDRS: '10.206.0.0/24' });
    const b = await controllerFor('ctl-ipam-ns-b', { VIRTUAL_MACHINE_CIDRS: '10.206.0.0/24' });
    await t.c.vmips.create(address(a.scope, 'mine', { type: 'Static', staticIP: '10.206.0.9' }));
    await vmipWhen(a.scope, 'mine', bound, 'Bound');
    await t.c.vmips.delete({ namespace: a.scope.namespace, name: 'mine' });
    await eventually(async () => (await leaseOf('ip-10-206-0-9'))?.status?.phase === 'Released', 'Released');
    await t.c.vmips.create(address(b.scope, 'theirs', { type: 'Static', staticIP: '10.206.0.9' }));
    const refused = await vmipWhen(b.scope, 'theirs', (x) => boundReason(x) !== undefined, 'Bound condition');
    expect(boundReason(refused)).toBe('VirtualMachineIPAddressLeaseAlreadyExists');
  });

  it('leaves addresses unbound while no CIDRs are configured', async () => {
    const { scope } = await controllerFor('ctl-ipam-off', {});
    await t.c.vmips.create(address(scope, 'nowhere', { type: 'Auto' }));
    const ip = await vmipWhen(scope, 'nowhere', (x) => boundReason(x) !== undefined, 'Bound condition');
    expect(ip.status?.conditions?.find((x) => x.type === 'Bound')).toMatchObject({ status: 'False', reason: 'VirtualMachineIPAddressLeaseNotReady' });
  });

  it("writes a new VM's status once, when its automatic address binds: no interim status while the address is made", async () => {
    const w = await startWorld(t.kube, t.c, 'ctl-ipam-once', { env: { VIRTUAL_MACHINE_CIDRS: '10.205.0.0/24' }, kubevirt: false });
    t.onCleanup(() => w.stop());
    await w.createVM('once', { runPolicy: 'Manual' });
    const vm = await w.vmWhen('once', (v) => v.status?.phase === 'Stopped' && v.status.ipAddress !== undefined, 'Stopped with its address');
    // Everything it leads to is done: the address Attached, its lease Bound, the internal VM made.
    const vmip = await vmipWhen(w.scope, vm.status?.virtualMachineIPAddressName ?? '', (x) => x.status?.phase === 'Attached', 'Attached');
    await eventually(async () => (await leaseOf(`ip-${(vmip.status?.address ?? '').replaceAll('.', '-')}`))?.status?.phase === 'Bound', 'lease Bound');
    await eventually(() => t.c.kvvms.get({ namespace: w.ns, name: 'once' }), 'the internal VM');
    const writes = await statusPatches('virtualmachines', w.ns, 'once');
    expect(writes.map((e) => e.requestObject?.status?.['phase'])).toEqual(['Stopped']);
  });
});
