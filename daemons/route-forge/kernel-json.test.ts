import { describe, expect, it } from '@jest/globals';
import { IpJsonError, normaliseDst, parseLookup, parseRoutes, parseRules } from './kernel-json.js';

// Captured from iproute2 6.1 (`ip -json ...`) in a test namespace.
const TABLE =
  '[{"type":"blackhole","dst":"10.66.0.0/16","metric":100,"flags":[]},{"dst":"10.66.0.5","gateway":"10.200.0.2","dev":"veth0","prefsrc":"10.200.0.1","flags":[]},{"dst":"10.66.0.6","dev":"cilium_host","scope":"link","prefsrc":"10.0.0.1","flags":[]}]';
const RULES =
  '[{"priority":0,"src":"all","table":"local"},{"priority":1490,"src":"all","dst":"10.66.0.0","dstlen":16,"table":"1490"},{"priority":32766,"src":"all","table":"main"},{"priority":100,"src":"all","dst":"10.9.9.9","table":"1490"}]';

describe('iproute2 JSON', () => {
  it('parses the routes of a table, host routes with /32 and the unicast type made explicit', () => {
    expect(parseRoutes(TABLE)).toEqual([
      { dst: '10.66.0.0/16', type: 'blackhole', metric: 100, gateway: undefined, dev: undefined, prefsrc: undefined },
      { dst: '10.66.0.5/32', type: 'unicast', metric: 0, gateway: '10.200.0.2', dev: 'veth0', prefsrc: '10.200.0.1' },
      { dst: '10.66.0.6/32', type: 'unicast', metric: 0, gateway: undefined, dev: 'cilium_host', prefsrc: '10.0.0.1' },
    ]);
    expect(parseRoutes('[]')).toEqual([]);
  });

  it('parses rules with their destination and table', () => {
    expect(parseRules(RULES)).toEqual([
      { priority: 0, dst: undefined, table: 'local' },
      { priority: 1490, dst: '10.66.0.0/16', table: '1490' },
      { priority: 32766, dst: undefined, table: 'main' },
      { priority: 100, dst: '10.9.9.9/32', table: '1490' },
    ]);
  });

  it.each([
    [
      'a local address',
      '[{"type":"local","dst":"10.0.0.1","dev":"lo","table":"local","prefsrc":"10.0.0.1","flags":[],"uid":0,"cache":["local"]}]',
      { ok: true, local: true, dev: 'lo', prefsrc: '10.0.0.1', gateway: undefined },
    ],
    [
      'an address on a link',
      '[{"dst":"10.200.0.2","dev":"veth0","prefsrc":"10.200.0.1","flags":[],"uid":0,"cache":[]}]',
      { ok: true, local: false, dev: 'veth0', prefsrc: '10.200.0.1', gateway: undefined },
    ],
    [
      'an address behind a gateway',
      '[{"dst":"10.201.0.7","gateway":"10.200.0.2","dev":"veth0","prefsrc":"10.200.0.1","flags":[],"uid":0,"cache":[]}]',
      { ok: true, local: false, dev: 'veth0', prefsrc: '10.200.0.1', gateway: '10.200.0.2' },
    ],
  ])('parses the lookup of %s', (_, text, expected) => {
    expect(parseLookup(text)).toEqual(expected);
  });

  it.each([
    ['not JSON', () => parseRoutes('[{"dst"')],
    ['not an array', () => parseRules('{}')],
    ['a route without destination', () => parseRoutes('[{"dev":"eth0"}]')],
    ['a rule without priority', () => parseRules('[{"table":"main"}]')],
    ['an empty lookup', () => parseLookup('[]')],
  ])('refuses %s with an error naming the command', (_, parse) => {
    expect(parse).toThrow(IpJsonError);
    expect(parse).toThrow(/unexpected output of ip/);
  });

  it.each([
    ['default', '0.0.0.0/0'],
    ['10.1.2.3', '10.1.2.3/32'],
    ['10.1.0.0/16', '10.1.0.0/16'],
  ])('normalises the destination %s to %s', (dst, expected) => {
    expect(normaliseDst(dst)).toBe(expected);
  });
});
