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
    expect(nextFree(ranges, () => false)).toBe('10.0.0.1');
    const taken = new Set(['10.0.0.1', '10.0.0.2', '10.0.1.1']);
    expect(nextFree(ranges, (ip) => taken.has(ip))).toBe('10.0.1.2');
  });

  it('answers undefined when every address is taken', () => {
    expect(nextFree(rangesOf(['10.0.0.0/30']), () => true)).toBeUndefined();
    expect(nextFree(rangesOf(['10.0.0.0/31']), () => false)).toBeUndefined();
  });
});
