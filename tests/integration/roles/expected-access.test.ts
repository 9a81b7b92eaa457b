import { describe, expect, it } from '@jest/globals';
import { ALL_VERBS, cellVerbs, expectedAccess } from './expected-access.js';

describe('expanding the seed access matrix', () => {
  it.each([
    ['-', []],
    ['R', ['get', 'list', 'watch']],
    ['CR', ['create', 'get', 'list', 'watch']],
    ['RUD', ['get', 'list', 'watch', 'patch', 'update', 'delete', 'deletecollection']],
    ['CRUD', ['create', 'get', 'list', 'watch', 'patch', 'update', 'delete', 'deletecollection']],
  ] as const)('cell %s grants exactly %j', (cell, verbs) => {
    expect([...cellVerbs(cell)].sort()).toEqual([...verbs].sort());
  });

  it('asks about every verb of every seed resource row and every cli verb, for each role', () => {
    // 9 resource rows x 8 verbs + 3 cli rows x 3 verbs
    expect(ALL_VERBS).toHaveLength(8);
    expect(expectedAccess('User')).toHaveLength(9 * 8 + 3 * 3);
    // 9 resource rows (storageprofiles among them) x 8 verbs + 2 pool subresource rows x 8 verbs
    expect(expectedAccess('User', 'extended')).toHaveLength(9 * 8 + 2 * 8);
  });

  it('lets the editors, and no level below, scale a pool and remove its members by name', () => {
    const granted = (level: 'PrivilegedUser' | 'Editor', sub: string): string[] =>
      expectedAccess(level, 'extended')
        .filter((c) => c.subresource === sub && c.allowed)
        .map((c) => c.verb)
        .sort();
    expect(granted('PrivilegedUser', 'scale')).toEqual([]);
    expect(granted('PrivilegedUser', 'scaledownwith')).toEqual([]);
    expect(granted('Editor', 'scale')).toEqual(['get', 'patch', 'update']);
    expect(granted('Editor', 'scaledownwith')).toEqual(['create']);
  });

  it('gives a User no lease access and no console, and a ClusterAdmin full lease access', () => {
    const denied = expectedAccess('User').filter((c) => c.row === 'virtualmachineipaddressleases' || c.group.startsWith('subresources'));
    expect(denied.every((c) => !c.allowed)).toBe(true);
    const leases = expectedAccess('ClusterAdmin').filter((c) => c.row === 'virtualmachineipaddressleases');
    expect(leases.every((c) => c.allowed)).toBe(true);
  });
});
