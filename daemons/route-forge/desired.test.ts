import { describe, expect, it } from '@jest/globals';
import { computeDesired, nodeAddressesToLookUp, subnetsOf } from './desired.js';
import type { Lookup, Route, SkipReason, VmAddress } from './model.js';

const nodes = new Map<string, string | undefined>([
  ['local', '10.0.0.1'],
  ['onlink', '10.200.0.2'],
  ['routed', '10.201.0.7'],
  ['bare', undefined],
  ['far', '10.250.0.1'],
]);
const lookups = new Map<string, Lookup>([
  ['10.0.0.1', { ok: true, local: true, dev: 'lo', prefsrc: '10.0.0.1' }],
  ['10.200.0.2', { ok: true, local: false, dev: 'eth0', prefsrc: '10.200.0.1' }],
  ['10.201.0.7', { ok: true, local: false, gateway: '10.200.0.3', dev: 'eth0', prefsrc: '10.200.0.1' }],
  ['10.250.0.1', { ok: false, error: 'Network is unreachable' }],
]);
const CIDRS = ['10.66.0.0/16'];
const vm = (key: string, ip?: string, node?: string, deleting = false): VmAddress => ({ key, ip, node, deleting });
const desiredFor = (vms: VmAddress[], cidrs = CIDRS): ReturnType<typeof computeDesired> =>
  computeDesired({ vms, nodes, cidrs, lookups, localDevice: 'cilium_host' });

describe('the route of one VM', () => {
  it.each<[string, VmAddress, Omit<Route, 'dst' | 'type' | 'metric'>]>([
    ['on this node: through the local device, from the local address', vm('a/local', '10.66.0.5', 'local'), { dev: 'cilium_host', prefsrc: '10.0.0.1' }],
    [
      'on a node on the same link: via the node address itself',
      vm('a/onlink', '10.66.0.6', 'onlink'),
      { gateway: '10.200.0.2', dev: 'eth0', prefsrc: '10.200.0.1' },
    ],
    [
      'on a node behind a gateway: via that gateway, as the kernel routes the node',
      vm('a/routed', '10.66.0.7', 'routed'),
      { gateway: '10.200.0.3', dev: 'eth0', prefsrc: '10.200.0.1' },
    ],
  ])('%s', (_, address, expected) => {
    const desired = desiredFor([address]);
    expect(desired.routes.get(`${address.ip ?? ''}/32`)).toEqual({
      dst: `${address.ip ?? ''}/32`,
      type: 'unicast',
      metric: 0,
      gateway: undefined,
      ...expected,
    });
    expect(desired.owners.get(`${address.ip ?? ''}/32`)).toBe(address.key);
    expect(desired.skipped).toEqual([]);
  });
});

describe('VMs that get no route of their own', () => {
  it.each<[string, VmAddress, SkipReason, boolean]>([
    ['no address yet', vm('a/x'), 'no-ip', false],
    ['an address that is not IPv4', vm('a/x', '10.66.0.300', 'local'), 'invalid-ip', false],
    ['an address outside every CIDR', vm('a/x', '10.55.0.1', 'local'), 'outside-cidrs', false],
    ['no node', vm('a/x', '10.66.0.5'), 'no-node', false],
    ['a node without a CiliumNode', vm('a/x', '10.66.0.5', 'ghost'), 'no-cilium-node', true],
    ['a CiliumNode without CiliumInternalIP', vm('a/x', '10.66.0.5', 'bare'), 'no-internal-ip', true],
    ['a node the kernel has no route to', vm('a/x', '10.66.0.5', 'far'), 'node-unreachable', true],
  ])('%s: skipped as %s; an existing route kept: %s', (_, address, reason, kept) => {
    const desired = desiredFor([address]);
    expect(desired.skipped.map((s) => s.reason)).toEqual([reason]);
    expect(desired.skipped[0]?.detail).not.toBe('');
    expect([...desired.routes.keys()]).toEqual(['10.66.0.0/16 metric 100']);
    expect(desired.keep.has('10.66.0.5/32')).toBe(kept);
  });

  it('routes the first of two VMs with the same address (by key) and skips the second', () => {
    const desired = desiredFor([vm('b/second', '10.66.0.5', 'onlink'), vm('a/first', '10.66.0.5', 'local')]);
    expect(desired.owners.get('10.66.0.5/32')).toBe('a/first');
    expect(desired.skipped).toEqual([{ vm: 'b/second', reason: 'duplicate-ip', detail: '10.66.0.5 is already routed for a/first' }]);
  });

  it('drops the route of a VM being deleted without calling it skipped', () => {
    const desired = desiredFor([vm('a/x', '10.66.0.5', 'local', true)]);
    expect(desired.routes.size).toBe(1);
    expect(desired.skipped).toEqual([]);
  });

  it('does not let a bad VM change the routes of the others', () => {
    const good = desiredFor([vm('a/good', '10.66.0.6', 'onlink')]);
    const mixed = desiredFor([vm('a/good', '10.66.0.6', 'onlink'), vm('a/bad', '10.55.0.1', 'far'), vm('a/worse', 'garbage', 'ghost'), vm('a/none')]);
    expect(mixed.routes).toEqual(good.routes);
  });
});

describe('CIDRs', () => {
  it('gives each CIDR a blackhole with metric 100, written as the kernel prints it, once', () => {
    const desired = desiredFor([], ['10.66.0.0/16', '10.67.0.1/24', '10.66.0.0/16']);
    expect(desired.cidrs).toEqual(['10.66.0.0/16', '10.67.0.0/24']);
    expect([...desired.routes.values()]).toEqual([
      { dst: '10.66.0.0/16', type: 'blackhole', metric: 100 },
      { dst: '10.67.0.0/24', type: 'blackhole', metric: 100 },
    ]);
  });

  it('ignores entries that are not subnets', () => {
    expect(subnetsOf(['nonsense', '10.0.0.0/33', ' 10.1.0.0/16 ']).map((s) => s.text)).toEqual(['10.1.0.0/16']);
  });
});

describe('node addresses to look up', () => {
  it('are those of the nodes hosting a routable VM, each once', () => {
    const vms = [
      vm('a/1', '10.66.0.1', 'onlink'),
      vm('a/2', '10.66.0.2', 'onlink'),
      vm('a/3', '10.66.0.3', 'local'),
      vm('a/4', '10.55.0.4', 'routed'),
      vm('a/5', '10.66.0.5', 'bare'),
    ];
    expect(nodeAddressesToLookUp({ vms, nodes, cidrs: CIDRS })).toEqual(['10.0.0.1', '10.200.0.2']);
  });
});
