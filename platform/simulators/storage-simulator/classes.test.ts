import { describe, expect, it } from '@jest/globals';
import type { PVC } from './kube.js';
import { SELECTED_NODE, SIMULATED_STORAGE_CLASSES, decide, type StorageClassLike } from './classes.js';

const byName = (name: string): StorageClassLike =>
  SIMULATED_STORAGE_CLASSES.find((c) => (c['metadata'] as { name: string }).name === name) as unknown as StorageClassLike;

const pvc = (accessModes: string[], volumeMode?: string, node?: string): PVC => ({
  metadata: { name: 'c', namespace: 'n', ...(node === undefined ? {} : { annotations: { [SELECTED_NODE]: node } }) },
  spec: { accessModes, ...(volumeMode === undefined ? {} : { volumeMode }) },
});

describe('which claims a simulated class serves', () => {
  it.each([
    ['local-simulated', pvc(['ReadWriteOnce']), { act: 'provision' }],
    ['local-simulated', pvc(['ReadWriteOnce'], 'Block'), { act: 'provision' }],
    ['local-simulated', pvc(['ReadWriteMany']), { act: 'refuse', why: expect.stringMatching(/local-simulated cannot give access mode ReadWriteMany/) }],
    ['local-simulated-rwx', pvc(['ReadWriteMany'], 'Block'), { act: 'provision' }],
    ['local-simulated-rwx', pvc(['ReadWriteOnce', 'ReadOnlyMany']), { act: 'provision' }],
    ['local-simulated-wffc', pvc(['ReadWriteOnce']), { act: 'wait', why: expect.stringMatching(/first consumer/) }],
    ['local-simulated-wffc', pvc(['ReadWriteOnce'], undefined, 'node-1'), { act: 'provision', node: 'node-1' }],
    ['local-simulated-wffc', pvc(['ReadWriteMany'], undefined, 'node-1'), { act: 'refuse', why: expect.stringMatching(/ReadWriteMany/) }],
  ])('%s, claim %j → %j', (cls, claim, want) => {
    expect(decide(claim, byName(cls))).toEqual(want);
  });

  it('a claim for a populator (dataSourceRef of another API group) waits; a PVC or VolumeSnapshot source does not', () => {
    const withRef = (apiGroup: string | undefined, kind: string): PVC => ({
      ...pvc(['ReadWriteOnce']),
      spec: { accessModes: ['ReadWriteOnce'], dataSourceRef: { ...(apiGroup === undefined ? {} : { apiGroup }), kind, name: 'x' } },
    });
    expect(decide(withRef('virtualization.deckhouse.io', 'VirtualDisk'), byName('local-simulated'))).toEqual({
      act: 'wait',
      why: 'waiting for the populator of virtualization.deckhouse.io VirtualDisk',
    });
    expect(decide(withRef(undefined, 'PersistentVolumeClaim'), byName('local-simulated'))).toEqual({ act: 'provision' });
    expect(decide(withRef('snapshot.storage.k8s.io', 'VolumeSnapshot'), byName('local-simulated'))).toEqual({ act: 'provision' });
  });

  it('a class without declared modes gives ReadWriteOnce in either volume mode, and refuses a mode it does not know', () => {
    const plain: StorageClassLike = { metadata: { name: 'plain' } };
    expect(decide(pvc(['ReadWriteOnce'], 'Block'), plain)).toEqual({ act: 'provision' });
    expect(decide(pvc(['ReadWriteOnce'], 'Weird'), plain)).toEqual({ act: 'refuse', why: expect.stringContaining('volume mode Weird') as unknown });
  });
});
