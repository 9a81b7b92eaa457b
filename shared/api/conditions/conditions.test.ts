import { describe, expect, it } from '@jest/globals';
import * as all from './index.js';
import { VMBDACondition, VMCondition } from './index.js';

const TYPE = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/;
const REASON = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

const sets = Object.entries(all).filter(([name]) => name.endsWith('Condition')) as [string, Record<string, { type: string; reason: Record<string, string> }>][];

describe('the condition constants', () => {
  it.each(sets)('%s has valid metav1.Condition types and reasons', (_name, set) => {
    for (const { type, reason } of Object.values(set)) {
      expect(type).toMatch(TYPE);
      for (const [key, value] of Object.entries(reason)) {
        expect(value).toBe(key);
        expect(value).toMatch(REASON);
      }
    }
  });

  it('are typed and frozen', () => {
    const reason: 'PodNotStarted' = VMCondition.Running.reason.PodNotStarted;
    expect(reason).toBe('PodNotStarted');
    expect(Object.isFrozen(VMCondition.Running.reason)).toBe(true);
  });

  it('keep the original type strings where they differ from the key', () => {
    expect(VMBDACondition.DiskAttachmentCapacityAvailable.type).toBe('DiskAttachmentCapacityAvailableType');
    expect(VMCondition.IPAddressReady.type).toBe('VirtualMachineIPAddressReady');
  });
});
