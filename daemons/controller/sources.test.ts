import { describe, expect, it } from '@jest/globals';
import { Store, type InformerHandlers, type KubeObject } from '../../shared/kube/index.js';
import { ObjectCache, type CacheSource } from './engine/cache.js';
import { enqueueOn } from './sources.js';

describe('event sources', () => {
  it('skip updates the filter calls irrelevant, but always enqueue on a resync (an update of the object with itself)', () => {
    const updates: InformerHandlers<KubeObject>['update'][] = [];
    const src = {
      store: new Store<KubeObject>(),
      synced: Promise.resolve(),
      on: (event: string, handler: InformerHandlers<KubeObject>['update']) => {
        if (event === 'update') updates.push(handler);
        return () => undefined;
      },
    } as unknown as CacheSource<KubeObject>;
    const enqueued: string[] = [];
    enqueueOn(
      new ObjectCache(src),
      (key) => void enqueued.push(key),
      (o) => [o.metadata.name ?? ''],
      () => false,
    );

    const a = { metadata: { name: 'a', resourceVersion: '1' } };
    const a2 = { metadata: { name: 'a', resourceVersion: '2' } };
    for (const h of updates) void h(a2, a);
    expect(enqueued).toEqual([]);
    for (const h of updates) void h(a2, a2);
    expect(enqueued).toEqual(['a', 'a']);
  });
});
