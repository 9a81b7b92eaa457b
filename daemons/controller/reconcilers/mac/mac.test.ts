import { API_VERSION } from '../../../../shared/api/resources/common.js';
import type { VirtualMachineMACAddressLease } from '../../../../shared/api/resources/addresses.js';
import { macLeaseInScope } from './lease.js';
import { describe, expect, it } from '@jest/globals';
import { leaseNameToMac, macToLeaseName, normalizeMac, ouiFromClusterUuid, randomMac } from './mac.js';

describe('MAC addresses', () => {
  it('take the OUI from the first cluster UUID byte that is locally administered unicast', () => {
    // 0x12: low digit 2 → starts there.
    expect(ouiFromClusterUuid('0f12ab34-0000-4000-8000-000000000000')).toBe('12:ab:34');
    // The last such byte wraps around to the start.
    expect(ouiFromClusterUuid('11111111-1111-1111-1111-1111111111a2')).toBe('a2:11:11');
    // None: the first three bytes with the second digit forced to 2.
    expect(ouiFromClusterUuid('13579135-7913-5791-3579-135791357913')).toBe('12:57:91');
    expect(ouiFromClusterUuid('not-a-uuid')).toBeUndefined();
  });

  it('name leases after the address and read it back', () => {
    expect(macToLeaseName('AA-BB-CC-00-11-22')).toBe('mac-aa-bb-cc-00-11-22');
    expect(leaseNameToMac('mac-aa-bb-cc-00-11-22')).toBe('aa:bb:cc:00:11:22');
    expect(leaseNameToMac('ip-10-0-0-1')).toBeUndefined();
    expect(normalizeMac('AA-BB-CC-00-11-22')).toBe('aa:bb:cc:00:11:22');
  });

  it('generate addresses inside the OUI', () => {
    expect(randomMac('12:ab:34', () => 10)).toBe('12:ab:34:0a:0a:0a');
    expect(randomMac('12:ab:34')).toMatch(/^12:ab:34(:[0-9a-f]{2}){3}$/);
  });
});

describe('MAC leases in a namespace-scoped run', () => {
  const lease = (namespace?: string): VirtualMachineMACAddressLease => ({
    apiVersion: API_VERSION,
    kind: 'VirtualMachineMACAddressLease',
    metadata: { name: 'mac-02-00-00-00-00-01' },
    spec: namespace === undefined ? {} : { virtualMachineMACAddressRef: { name: 'a', namespace } },
  });

  it('are ours only when their address is in the watched namespace', () => {
    expect(macLeaseInScope(lease('ns1'), 'ns1')).toBe(true);
    expect(macLeaseInScope(lease('ns2'), 'ns1')).toBe(false);
    expect(macLeaseInScope(lease(), 'ns1')).toBe(false);
    expect(macLeaseInScope(lease('ns2'), undefined)).toBe(true);
  });
});
