import { describe, expect, it } from '@jest/globals';
import { ipToLeaseName, isAlignedCIDR, isUsableIn, leaseNameToIP, overlaps, parseSubnet } from './ipv4.js';

describe('IPv4 subnets', () => {
  it('detects overlap and usable addresses', () => {
    const a = parseSubnet('10.0.0.0/16');
    const b = parseSubnet('10.0.200.0/24');
    const c = parseSubnet('10.1.0.0/16');
    expect(a && b && overlaps(a, b)).toBe(true);
    expect(a && c && overlaps(a, c)).toBe(false);
    const one = parseSubnet('10.0.0.7/32');
    expect(one && isUsableIn(one, (10 << 24) + 7)).toBe(true);
    expect(b && isUsableIn(b, (10 << 24) + (200 << 8))).toBe(false);
  });

  it('refuses what is not a subnet', () => {
    expect(['10.0.0.0', '10.0.0.0/33', '10.0.0.256/8', '01.0.0.0/8', 'x/8', '10.0.0.0/8/1'].map(parseSubnet)).toEqual(Array(6).fill(undefined));
  });

  it('maps lease names and addresses both ways', () => {
    expect(leaseNameToIP('ip-10-66-0-5')).toBe('10.66.0.5');
    expect(leaseNameToIP('ip-10-66-0-256')).toBeUndefined();
    expect(leaseNameToIP('mac-aa-bb')).toBeUndefined();
    expect(ipToLeaseName('10.66.0.5')).toBe('ip-10-66-0-5');
  });
  it('tells aligned subnets from unaligned ones', () => {
    expect(['10.66.10.0/24', '10.0.0.0/8', '10.0.0.7/32'].map(isAlignedCIDR)).toEqual([true, true, true]);
    expect(['10.66.10.1/24', '10.0.0.0/33', 'x', '10.0.0.0'].map(isAlignedCIDR)).toEqual([false, false, false, false]);
  });
});
