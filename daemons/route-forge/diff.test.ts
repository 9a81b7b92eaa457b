import { describe, expect, it } from '@jest/globals';
import { commandFor } from './commands.js';
import { computeDesired } from './desired.js';
import { diff } from './diff.js';
import type { KernelState, Lookup, Route, Rule, VmAddress } from './model.js';

const T = 1490;
const lookups = new Map<string, Lookup>([
  ['10.0.0.1', { ok: true, local: true, dev: 'lo', prefsrc: '10.0.0.1' }],
  ['10.200.0.2', { ok: true, local: false, dev: 'eth0', prefsrc: '10.200.0.1' }],
  ['10.250.0.1', { ok: false, error: 'Network is unreachable' }],
]);
const nodes = new Map<string, string | undefined>([
  ['a', '10.0.0.1'],
  ['b', '10.200.0.2'],
  ['far', '10.250.0.1'],
]);
const vms: VmAddress[] = [
  { key: 'ns/local', ip: '10.66.0.5', node: 'a', deleting: false },
  { key: 'ns/remote', ip: '10.66.0.6', node: 'b', deleting: false },
];
const desired = (extra: VmAddress[] = [], cidrs = ['10.66.0.0/16']): ReturnType<typeof computeDesired> =>
  computeDesired({ vms: [...vms, ...extra], nodes, cidrs, lookups, localDevice: 'cilium_host' });

const blackhole: Route = { dst: '10.66.0.0/16', type: 'blackhole', metric: 100 };
const local: Route = { dst: '10.66.0.5/32', type: 'unicast', dev: 'cilium_host', prefsrc: '10.0.0.1', metric: 0 };
const remote: Route = { dst: '10.66.0.6/32', type: 'unicast', gateway: '10.200.0.2', dev: 'eth0', prefsrc: '10.200.0.1', metric: 0 };
const rule: Rule = { priority: T, dst: '10.66.0.0/16', table: String(T) };
const converged: KernelState = { routes: [blackhole, local, remote], rules: [{ priority: 0, table: 'local' }, rule] };

const lines = (state: KernelState, d = desired()): string[] => diff(d, state, T).map((c) => commandFor(c, T));

describe('the diff against the kernel', () => {
  it.each<[string, KernelState, string[]]>([
    [
      'from empty: routes first, then the rule',
      { routes: [], rules: [] },
      [
        'route replace blackhole 10.66.0.0/16 table 1490 metric 100',
        'route replace 10.66.0.5/32 dev cilium_host src 10.0.0.1 table 1490',
        'route replace 10.66.0.6/32 via 10.200.0.2 dev eth0 src 10.200.0.1 table 1490',
        'rule add to 10.66.0.0/16 lookup 1490 priority 1490',
      ],
    ],
    ['converged: nothing', converged, []],
    [
      'a route deleted by hand: put back',
      { ...converged, routes: [blackhole, local] },
      ['route replace 10.66.0.6/32 via 10.200.0.2 dev eth0 src 10.200.0.1 table 1490'],
    ],
    [
      'a route changed by hand: replaced',
      { ...converged, routes: [blackhole, local, { ...remote, gateway: '10.200.0.9' }] },
      ['route replace 10.66.0.6/32 via 10.200.0.2 dev eth0 src 10.200.0.1 table 1490'],
    ],
    [
      'a source address lost: replaced',
      { ...converged, routes: [blackhole, { ...local, prefsrc: undefined }, remote] },
      ['route replace 10.66.0.5/32 dev cilium_host src 10.0.0.1 table 1490'],
    ],
    [
      'a stale route of a gone VM: removed',
      { ...converged, routes: [...converged.routes, { dst: '10.66.9.9/32', type: 'unicast', gateway: '10.200.0.2', metric: 0 }] },
      ['route del 10.66.9.9/32 table 1490 metric 0'],
    ],
    [
      'the same destination with another metric: removed, ours kept',
      { ...converged, routes: [...converged.routes, { ...remote, metric: 5 }] },
      ['route del 10.66.0.6/32 table 1490 metric 5'],
    ],
    [
      'a rule and blackhole of a CIDR no longer configured: removed',
      {
        routes: [...converged.routes, { dst: '10.99.0.0/16', type: 'blackhole', metric: 100 }],
        rules: [...converged.rules, { priority: T, dst: '10.99.0.0/16', table: String(T) }],
      },
      ['rule del priority 1490 to 10.99.0.0/16 lookup 1490', 'route del 10.99.0.0/16 table 1490 metric 100'],
    ],
    [
      'our rule with another priority: replaced',
      { ...converged, rules: [{ ...rule, priority: 100 }] },
      ['rule add to 10.66.0.0/16 lookup 1490 priority 1490', 'rule del priority 100 to 10.66.0.0/16 lookup 1490'],
    ],
    ['a duplicate of our rule: removed', { ...converged, rules: [rule, { ...rule }] }, ['rule del priority 1490 to 10.66.0.0/16 lookup 1490']],
    [
      'rules of other tables and rules without destination: left alone',
      { ...converged, rules: [...converged.rules, { priority: 5, dst: '10.99.0.0/16', table: 'main' }, { priority: 7, table: String(T) }] },
      [],
    ],
  ])('%s', (_, state, expected) => {
    expect(lines(state)).toEqual(expected);
  });

  it('keeps the route of a VM whose node cannot be reached now, and removes that of a VM without node', () => {
    const stale: Route = { dst: '10.66.0.7/32', type: 'unicast', gateway: '10.200.0.2', dev: 'eth0', metric: 0 };
    const state = { ...converged, routes: [...converged.routes, stale] };
    expect(lines(state, desired([{ key: 'ns/far', ip: '10.66.0.7', node: 'far', deleting: false }]))).toEqual([]);
    expect(lines(state, desired([{ key: 'ns/stopped', ip: '10.66.0.7', deleting: false }]))).toEqual(['route del 10.66.0.7/32 table 1490 metric 0']);
  });
});
