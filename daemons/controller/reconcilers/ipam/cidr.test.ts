import { describe, expect, it } from '@jest/globals';
import { formatIPv4, ipOfLeaseName, isAssignable, leaseNameOf, nextFree, parseCIDR, parseIPv4, rangesOf } from './cidr.js';

describe('IPv4 helpers for IPAM', () => {
  it.each([
    ['10.0.0.5', 167772165],
    ['255.255.255.255', 4294967295],
    ['0.0.0.0', 0],
  ])('parses %s and formats it back', (text, value) => {
    expect(parseIPv4(text)).toBe(value);
    expect(formatIPv4(value)).toBe(text);
  });

  it.each(['10.0.0', '10.0.0.256', 'a.b.c.d', '10.0.0.1/24', ''])('rejects %j as an address', (text) => {
    expect(parseIPv4(text)).toBeUndefined();
  });

  it('computes the first and last address of a prefix', () => {
    expect(parseCIDR('10.0.0.0/30')).toEqual({ cidr: '10.0.0.0/30', first: 167772160, last: 167772163 });
    expect(parseCIDR('10.0.0.0/33')).toBeUndefined();
  });

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

  it('encodes the address in the lease name and decodes it back', () => {
    expect(leaseNameOf('10.66.10.5')).toBe('ip-10-66-10-5');
    expect(ipOfLeaseName('ip-10-66-10-5')).toBe('10.66.10.5');
    expect(ipOfLeaseName('ip-10-66-10')).toBeUndefined();
    expect(ipOfLeaseName('ip-10-66-10-300')).toBeUndefined();
  });
});
