import { describe, expect, it } from '@jest/globals';
import { activePod, CREATED_BY_LABEL, MIGRATION_LABEL, podsOf, type LauncherPodLike } from './launcher.js';

const vmi = (nodeName?: string): { metadata: { uid: string }; status: { nodeName?: string } } => ({
  metadata: { uid: 'u-1' },
  status: nodeName === undefined ? {} : { nodeName },
});
const pod = (name: string, over: { uid?: string; node?: string; created?: string; deleting?: boolean; target?: boolean } = {}): LauncherPodLike => ({
  metadata: {
    name,
    labels: { [CREATED_BY_LABEL]: over.uid ?? 'u-1', ...(over.target === true ? { [MIGRATION_LABEL]: 'm-1' } : {}) },
    creationTimestamp: over.created ?? '2026-01-01T00:00:00Z',
    ...(over.deleting === true ? { deletionTimestamp: '2026-01-01T00:05:00Z' } : {}),
  },
  spec: over.node === undefined ? {} : { nodeName: over.node },
});

describe('the active launcher pod', () => {
  it('ignores the pods of an earlier instance of the same VM', () => {
    expect(podsOf(vmi(), [pod('a', { uid: 'old' }), pod('b')]).map((p) => p.metadata.name)).toEqual(['b']);
  });

  it('before the instance has a node, is its first pod that is no migration target', () => {
    expect(activePod(vmi(), [pod('target', { target: true }), pod('source')])?.metadata.name).toBe('source');
  });

  it('is the newest pod on the instance node that is not being deleted', () => {
    const pods = [
      pod('old', { node: 'n1', created: '2026-01-01T00:00:00Z' }),
      pod('new', { node: 'n1', created: '2026-01-01T00:01:00Z' }),
      pod('gone', { node: 'n1', created: '2026-01-01T00:02:00Z', deleting: true }),
      pod('elsewhere', { node: 'n2', created: '2026-01-01T00:03:00Z' }),
    ];
    expect(activePod(vmi('n1'), pods)?.metadata.name).toBe('new');
  });

  it('is none when no pod of the instance runs on its node', () => {
    expect(activePod(vmi('n3'), [pod('a', { node: 'n1' })])).toBeUndefined();
  });
});
