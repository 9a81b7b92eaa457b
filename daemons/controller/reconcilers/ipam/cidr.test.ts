import { describe, expect, it } from '@jest/globals';
import { parseIPv4 } from '../../../../shared/api/ipv4.js';
import { isAssignable, nextFree, rangesOf } from './cidr.js';

describe('address allocation over virtualMachineCIDRs', () => {
  it.each([
    ['10.0.0.0', false, 'network address'],
    ['10.0.0.1', true, 'first host'],
    ['10.0.0.2', true, 'last host'],
    ['10.0.0.3', false, 'broadcast address'],
    ['10.0.0.4', false, 'outside'],
    ['192.168.1.7', true, 'a /32 prefix of size 1'],
  ])('%s is assignable=%s (%s)', (ip, expected) => {
    expect(isAssignable(parseIPv4(ip) ?? -1, rangesOf(['10.0.0.0/30', '192.168.1.7/32']))).toBe(expected);
  });

  it('skips CIDRs that do not parse', () => {
    expect(rangesOf(['10.0.0.0/33', 'x', '10.1.0.0/24']).map((r) => r.text)).toEqual(['10.1.0.0/24']);
  });

  it('walks CIDRs in order, skipping network, broadcast and taken addresses', () => {
    const ranges = rangesOf(['10.0.0.0/30', '10.0.1.0/29']);
    expect(nextFree(ranges, () => false)).toEqual({ ip: '10.0.0.1', position: 0 });
    const taken = new Set(['10.0.0.1', '10.0.0.2', '10.0.1.1']);
    expect(nextFree(ranges, (ip) => taken.has(ip))).toEqual({ ip: '10.0.1.2', position: 3 });
  });

  it('starts at a position (addresses numbered across the CIDRs in order) and asks about each address it passes', () => {
    const ranges = rangesOf(['10.0.0.0/30', '192.168.1.7/32', '10.0.1.0/29']);
    expect(nextFree(ranges, () => false, 1)).toEqual({ ip: '10.0.0.2', position: 1 });
    expect(nextFree(ranges, () => false, 2)).toEqual({ ip: '192.168.1.7', position: 2 });
    expect(nextFree(ranges, () => false, 3)).toEqual({ ip: '10.0.1.1', position: 3 });
    const asked: Array<[string, number]> = [];
    const taken = new Set(['192.168.1.7', '10.0.1.1']);
    expect(
      nextFree(
        ranges,
        (ip, position) => {
          asked.push([ip, position]);
          return taken.has(ip);
        },
        2,
      ),
    ).toEqual({ ip: '10.0.1.2', position: 4 });
    expect(asked).toEqual([
      ['192.168.1.7', 2],
      ['10.0.1.1', 3],
      ['10.0.1.2', 4],
    ]);
    expect(nextFree(ranges, () => false, 9)).toBeUndefined();
  });

  it('answers undefined when every address is taken', () => {
    expect(nextFree(rangesOf(['10.0.0.0/30']), () => true)).toBeUndefined();
    expect(nextFree(rangesOf(['10.0.0.0/31']), () => false)).toBeUndefined();
    expect(nextFree(rangesOf(['10.0.0.0/31', '10.0.1.0/30']), () => false)).toEqual({ ip: '10.0.1.1', position: 0 });
  });
});
