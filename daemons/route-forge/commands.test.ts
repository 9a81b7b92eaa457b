import { describe, expect, it } from '@jest/globals';
import { UnsafeCommandError, commandFor, readCommands } from './commands.js';
import type { Change } from './model.js';

const T = 1490;

describe('ip batch lines', () => {
  it.each<[string, Change, string]>([
    [
      'a route via a gateway',
      {
        op: 'route-replace',
        owner: 'a/vm',
        route: { dst: '10.66.0.5/32', type: 'unicast', gateway: '10.200.0.2', dev: 'eth0', prefsrc: '10.200.0.1', metric: 0 },
      },
      'route replace 10.66.0.5/32 via 10.200.0.2 dev eth0 src 10.200.0.1 table 1490',
    ],
    [
      'a route through a device',
      { op: 'route-replace', owner: 'a/vm', route: { dst: '10.66.0.6/32', type: 'unicast', dev: 'cilium_host', prefsrc: '10.0.0.1', metric: 0 } },
      'route replace 10.66.0.6/32 dev cilium_host src 10.0.0.1 table 1490',
    ],
    [
      'a blackhole',
      { op: 'route-replace', owner: '10.66.0.0/16', route: { dst: '10.66.0.0/16', type: 'blackhole', metric: 100 } },
      'route replace blackhole 10.66.0.0/16 table 1490 metric 100',
    ],
    [
      'a route removal',
      { op: 'route-delete', route: { dst: '10.66.9.9/32', type: 'unicast', gateway: '10.200.0.2', metric: 0 } },
      'route del 10.66.9.9/32 table 1490 metric 0',
    ],
    [
      'a blackhole removal',
      { op: 'route-delete', route: { dst: '10.99.0.0/16', type: 'blackhole', metric: 100 } },
      'route del 10.99.0.0/16 table 1490 metric 100',
    ],
    ['a rule', { op: 'rule-add', cidr: '10.66.0.0/16' }, 'rule add to 10.66.0.0/16 lookup 1490 priority 1490'],
    [
      'a rule removal',
      { op: 'rule-delete', rule: { priority: 1490, dst: '10.99.0.0/16', table: '1490' } },
      'rule del priority 1490 to 10.99.0.0/16 lookup 1490',
    ],
  ])('for %s', (_, change, line) => {
    expect(commandFor(change, T)).toBe(line);
  });

  it.each<[string, Change]>([
    [
      'a device name carrying a second command',
      { op: 'route-replace', owner: 'x', route: { dst: '10.66.0.5/32', type: 'unicast', dev: 'eth0\nroute flush', metric: 0 } },
    ],
    [
      'a gateway that is not an address',
      { op: 'route-replace', owner: 'x', route: { dst: '10.66.0.5/32', type: 'unicast', gateway: 'table main', metric: 0 } },
    ],
    ['a destination without length', { op: 'route-delete', route: { dst: '10.66.0.5', type: 'unicast', metric: 0 } }],
    ['a rule without destination', { op: 'rule-delete', rule: { priority: 1490, table: '1490' } }],
  ])('refuses %s', (_, change) => {
    expect(() => commandFor(change, T)).toThrow(UnsafeCommandError);
  });

  it('looks up each node address', () => {
    expect(readCommands(['10.0.0.1', '10.200.0.2'])).toEqual(['route get 10.0.0.1', 'route get 10.200.0.2']);
    expect(() => readCommands(['10.0.0.1; reboot'])).toThrow(UnsafeCommandError);
  });
});
