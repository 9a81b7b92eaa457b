import { describe, expect, it } from '@jest/globals';
import { pendingChanges } from './changes.js';

describe('pendingChanges', () => {
  it('lists changed leaves by path with both values', () => {
    const applied = { cpu: { cores: 2, coreFraction: '50%' }, memory: { size: '2Gi' } };
    const desired = { cpu: { cores: 4, coreFraction: '50%' }, memory: { size: '4Gi' } };
    expect(pendingChanges(applied, desired)).toEqual([
      { operation: 'replace', path: 'cpu.cores', currentValue: 2, desiredValue: 4 },
      { operation: 'replace', path: 'memory.size', currentValue: '2Gi', desiredValue: '4Gi' },
    ]);
  });

  it('reports added and removed fields, and compares lists whole', () => {
    const applied = { nodeSelector: { a: '1' }, blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'a' }] };
    const desired = { priorityClassName: 'high', blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'b' }] };
    expect(pendingChanges(applied, desired).map((c) => [c.operation, c.path])).toEqual([
      ['replace', 'blockDeviceRefs'],
      ['remove', 'nodeSelector'],
      ['add', 'priorityClassName'],
    ]);
  });

  it('leaves out what applies at once: runPolicy, disruptions, liveMigrationPolicy, hot-plugged usbDevices', () => {
    const applied = { runPolicy: 'Manual', disruptions: { restartApprovalMode: 'Manual' }, liveMigrationPolicy: 'PreferSafe' };
    const desired = {
      runPolicy: 'AlwaysOn',
      disruptions: { restartApprovalMode: 'Automatic' },
      liveMigrationPolicy: 'AlwaysSafe',
      usbDevices: [{ name: 'usb-dongle' }],
    };
    expect(pendingChanges(applied, desired)).toEqual([]);
  });

  it('lists a core fraction change as awaiting a restart, the original default 100% equal to an empty one', () => {
    expect(pendingChanges({ cpu: { cores: 2, coreFraction: '50%' } }, { cpu: { cores: 2, coreFraction: '25%' } })).toEqual([
      { operation: 'replace', path: 'cpu.coreFraction', currentValue: '50%', desiredValue: '25%' },
    ]);
    expect(pendingChanges({ cpu: { cores: 2 } }, { cpu: { cores: 2, coreFraction: '100%' } })).toEqual([]);
  });

  it('joins a change of cores and core fraction into one cpu replace, as the original does', () => {
    const applied = { cpu: { cores: 2, coreFraction: '50%' }, memory: { size: '2Gi' } };
    const desired = { cpu: { cores: 4, coreFraction: '25%' }, memory: { size: '4Gi' } };
    expect(pendingChanges(applied, desired)).toEqual([
      { operation: 'replace', path: 'cpu', currentValue: applied.cpu, desiredValue: desired.cpu },
      { operation: 'replace', path: 'memory.size', currentValue: '2Gi', desiredValue: '4Gi' },
    ]);
  });
});
