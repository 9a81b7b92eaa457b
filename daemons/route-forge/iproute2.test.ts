import { describe, expect, it } from '@jest/globals';
import { classifyMonitorLine, parseBatchFailures } from './iproute2.js';

describe('ip -force -batch failures', () => {
  it("names each failed line (0-based) with the kernel's message", () => {
    // Captured from iproute2 6.1: lines 2, 3 and 5 of a batch failed.
    const stderr =
      'Error: Invalid prefsrc address.\nCommand failed -:2\nCannot find device "nosuch"\nCommand failed -:3\nRTNETLINK answers: No such process\nCommand failed -:5\n';
    expect(parseBatchFailures(stderr)).toEqual([
      { index: 1, message: 'Error: Invalid prefsrc address.' },
      { index: 2, message: 'Cannot find device "nosuch"' },
      { index: 4, message: 'RTNETLINK answers: No such process' },
    ]);
    expect(parseBatchFailures('')).toEqual([]);
  });
});

describe('ip monitor lines', () => {
  it.each([
    [
      'a route of the table deleted',
      'Deleted 10.66.0.5 via 10.200.0.2 dev veth0 table 1490 src 10.200.0.1 ',
      { kind: 'table', route: { deleted: true, key: '10.66.0.5/32' } },
    ],
    ['a route of the table added', '10.66.0.5 via 10.200.0.2 dev veth0 table 1490 ', { kind: 'table', route: { deleted: false, key: '10.66.0.5/32' } }],
    ['a blackhole of the table', 'blackhole 10.66.0.0/16 table 1490 metric 100 ', { kind: 'table', route: { deleted: false, key: '10.66.0.0/16 metric 100' } }],
    ['a rule of the table deleted', 'Deleted 1490:\tfrom all to 10.66.0.0/16 lookup 1490', { kind: 'table', route: undefined }],
    ['a route of table 14900', '10.66.0.5 dev veth0 table 14900 ', { kind: 'other' }],
    ['a route of the main table', '10.201.0.0/24 via 10.200.0.3 dev veth0 ', { kind: 'other' }],
    ['a local address route', 'local 10.0.0.1 dev cilium_host table local proto kernel scope host src 10.0.0.1 ', { kind: 'other' }],
    [
      'a link going down',
      '3: cilium_host@cilium_net: <BROADCAST,MULTICAST> mtu 1500 qdisc noqueue state DOWN group default ',
      { kind: 'link-down', device: 'cilium_host' },
    ],
    ['a link losing its carrier', '2: eth0: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 state DOWN ', { kind: 'link-down', device: 'eth0' }],
    ['a link deleted', 'Deleted 7: lxc12ab@if6: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 ', { kind: 'link-down', device: 'lxc12ab' }],
    ['a link coming up', '3: cilium_host@cilium_net: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP ', undefined],
    ['a continuation line', '    link/ether a6:91:ba:b5:67:72 brd ff:ff:ff:ff:ff:ff', undefined],
  ])('%s', (_, line, expected) => {
    expect(classifyMonitorLine(line, 1490)).toEqual(expected);
  });
});
