import { describe, expect, it } from '@jest/globals';
import { Store, type InformerHandlers, type KubeObject, objectKey } from '../../../shared/kube/index.js';
import { ObjectCache, type CacheSource } from './cache.js';

/** An informer stand-in: the test moves the store and fires the events, as a watch would. */
function source(): { src: CacheSource<KubeObject>; add: (o: KubeObject) => void; update: (o: KubeObject) => void; remove: (o: KubeObject) => void } {
  const store = new Store<KubeObject>();
  const handlers: { [E in keyof InformerHandlers<KubeObject>]: InformerHandlers<KubeObject>[E][] } = { add: [], update: [], delete: [], invalid: [] };
  const src = {
    store,
    synced: Promise.resolve(),
    on: <E extends keyof InformerHandlers<KubeObject>>(event: E, handler: InformerHandlers<KubeObject>[E]) => {
      handlers[event].push(handler);
      return () => undefined;
    },
    start() {
      return this;
    },
    stop: () => Promise.resolve(),
  } as unknown as CacheSource<KubeObject>;
  return {
    src,
    add: (o) => {
      store.set(o);
      handlers.add.forEach((h) => void h(o));
    },
    update: (o) => {
      const old = store.set(o) ?? o;
      handlers.update.forEach((h) => void h(o, old));
    },
    remove: (o) => {
      store.delete(objectKey(o.metadata));
      handlers.delete.forEach((h) => void h(o));
    },
  };
}

const obj = (rv: string, extra: Record<string, string> = {}): KubeObject => ({ metadata: { namespace: 'ns', name: 'a', resourceVersion: rv, labels: extra } });

describe('ObjectCache', () => {
  it('answers the newer of the watched object and this process’s own write', () => {
    const s = source();
    const cache = new ObjectCache(s.src);
    s.add(obj('10'));
    cache.remember(obj('12', { mine: 'yes' }));
    expect(cache.get('ns/a')?.metadata.resourceVersion).toBe('12');
    s.update(obj('15'));
    expect(cache.get('ns/a')?.metadata.resourceVersion).toBe('15');
    cache.remember(obj('13'));
    expect(cache.get('ns/a')?.metadata.resourceVersion).toBe('15');
  });

  it('counts every way an object leaves it (a delete event, forget), and nothing else', () => {
    const s = source();
    const cache = new ObjectCache(s.src);
    s.add(obj('10'));
    s.update(obj('11'));
    cache.remember(obj('12'));
    expect(cache.removals).toBe(0);
    s.remove(obj('13'));
    expect(cache.removals).toBe(1);
    cache.remember(obj('14'));
    cache.forget('ns/a');
    expect(cache.removals).toBe(2);
  });

  it('never brings a deleted object back through a late write response', () => {
    const s = source();
    const cache = new ObjectCache(s.src);
    s.add(obj('10'));
    s.remove(obj('20'));
    cache.remember(obj('18'));
    expect(cache.get('ns/a')).toBeUndefined();
    expect(cache.list()).toEqual([]);
    cache.remember(obj('25'));
    expect(cache.get('ns/a')?.metadata.resourceVersion).toBe('25');
  });

  it('keeps indexes in step with adds, updates and deletes', () => {
    const s = source();
    const cache = new ObjectCache(s.src);
    cache.addIndex('color', (o) => [o.metadata.labels?.['color'] ?? '']);
    s.add(obj('1', { color: 'red' }));
    expect(cache.countByIndex('color', 'red')).toBe(1);
    s.update(obj('2', { color: 'blue' }));
    expect(cache.countByIndex('color', 'red')).toBe(0);
    expect(cache.byIndex('color', 'blue').map((o) => o.metadata.resourceVersion)).toEqual(['2']);
    s.remove(obj('3', { color: 'blue' }));
    expect(cache.byIndex('color', 'blue')).toEqual([]);
  });

  it('finds this process’s own fresh writes through its indexes, as get() does', () => {
    const s = source();
    const cache = new ObjectCache(s.src);
    cache.addIndex('color', (o) => [o.metadata.labels?.['color'] ?? '']);
    s.add(obj('1', { color: 'red' }));
    cache.remember(obj('2', { color: 'blue' })); // our write's answer; the watch event is still on its way
    expect(cache.get('ns/a')?.metadata.labels?.['color']).toBe('blue');
    expect(cache.byIndex('color', 'blue').map((o) => o.metadata.resourceVersion)).toEqual(['2']);
    expect(cache.byIndex('color', 'red')).toEqual([]);
    expect([cache.countByIndex('color', 'blue'), cache.countByIndex('color', 'red')]).toEqual([1, 0]);

    const created = { metadata: { namespace: 'ns', name: 'new', resourceVersion: '3', labels: { color: 'green' } } };
    cache.remember(created); // created by us, not watched yet
    expect(cache.byIndex('color', 'green')).toEqual([created]);

    s.update(obj('2', { color: 'blue' })); // the watch catches up: nothing moves
    expect(cache.byIndex('color', 'blue').map((o) => o.metadata.resourceVersion)).toEqual(['2']);
    cache.forget('ns/new'); // deleted by us
    expect([cache.byIndex('color', 'green'), cache.countByIndex('color', 'green')]).toEqual([[], 0]);
  });

  it('keeps the index on the newer copy when a late watch event is older than our write', () => {
    const s = source();
    const cache = new ObjectCache(s.src);
    cache.addIndex('color', (o) => [o.metadata.labels?.['color'] ?? '']);
    s.add(obj('1', { color: 'red' }));
    cache.remember(obj('5', { color: 'blue' }));
    s.update(obj('3', { color: 'green' })); // an older version arrives after our write's answer
    expect(cache.get('ns/a')?.metadata.resourceVersion).toBe('5');
    expect(cache.byIndex('color', 'blue').map((o) => o.metadata.resourceVersion)).toEqual(['5']);
    expect([cache.countByIndex('color', 'green'), cache.countByIndex('color', 'red')]).toEqual([0, 0]);
  });
});
