import { describe, expect, it } from '@jest/globals';
import {
  PatchTestFailedError,
  addFinalizerOps,
  applyJsonPatch,
  applyMergePatch,
  conditionalMergePatch,
  pointer,
  pointerSegment,
  removeFinalizerOps,
} from './patch.js';

describe('JSON Pointer', () => {
  it('escapes ~ before / as RFC 6901 requires', () => {
    expect(pointerSegment('a~/b')).toBe('a~0~1b');
    expect(pointer(['metadata', 'labels', 'example.com/x'])).toBe('/metadata/labels/example.com~1x');
    expect(pointer(['spec', 'items', 0])).toBe('/spec/items/0');
  });
});

describe('finalizer patches', () => {
  it('adds the first finalizer guarded by the resourceVersion', () => {
    expect(addFinalizerOps({ resourceVersion: '42' }, 'example.com/f')).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/metadata/finalizers', value: ['example.com/f'] },
    ]);
  });

  it('appends to an existing list guarded by the whole list', () => {
    expect(addFinalizerOps({ resourceVersion: '42', finalizers: ['other'] }, 'example.com/f')).toEqual([
      { op: 'test', path: '/metadata/finalizers', value: ['other'] },
      { op: 'add', path: '/metadata/finalizers/-', value: 'example.com/f' },
    ]);
  });

  it('treats an empty list like an absent one', () => {
    expect(addFinalizerOps({ resourceVersion: '7', finalizers: [] }, 'f')?.[0]).toEqual({
      op: 'test',
      path: '/metadata/resourceVersion',
      value: '7',
    });
  });

  it('adds nothing when the finalizer is already there', () => {
    expect(addFinalizerOps({ finalizers: ['a', 'f'] }, 'f')).toBeUndefined();
  });

  it('refuses to add the first finalizer without a resourceVersion to guard on', () => {
    expect(() => addFinalizerOps({}, 'f')).toThrow(TypeError);
  });

  it('removes every copy from the last index to the first, each behind a test', () => {
    expect(removeFinalizerOps({ finalizers: ['f', 'a', 'f'] }, 'f')).toEqual([
      { op: 'test', path: '/metadata/finalizers/2', value: 'f' },
      { op: 'remove', path: '/metadata/finalizers/2' },
      { op: 'test', path: '/metadata/finalizers/0', value: 'f' },
      { op: 'remove', path: '/metadata/finalizers/0' },
    ]);
  });

  it('removes nothing when the finalizer is absent', () => {
    expect(removeFinalizerOps({ finalizers: ['a'] }, 'f')).toBeUndefined();
    expect(removeFinalizerOps({}, 'f')).toBeUndefined();
  });
});

describe('conditional merge patches', () => {
  it('carry the resourceVersion they were decided on, next to the metadata they change', () => {
    expect(conditionalMergePatch({ metadata: { annotations: { a: 'b' } }, spec: { x: 1 } }, '42')).toEqual({
      metadata: { annotations: { a: 'b' }, resourceVersion: '42' },
      spec: { x: 1 },
    });
    expect(conditionalMergePatch({ status: { phase: 'Running' } }, '7')).toEqual({ metadata: { resourceVersion: '7' }, status: { phase: 'Running' } });
  });

  it('refuse to be built without a resourceVersion (an unconditional write by mistake)', () => {
    expect(() => conditionalMergePatch({ spec: {} }, undefined)).toThrow(TypeError);
    expect(() => conditionalMergePatch({ spec: {} }, '')).toThrow(TypeError);
  });
});

describe('applying patches', () => {
  it('merges RFC 7386 patches: null deletes, objects merge, arrays and scalars replace, the target is not changed', () => {
    const target = { a: { b: 1, c: 2 }, list: [1, 2], keep: 'x' };
    expect(applyMergePatch(target, { a: { b: null, d: 3 }, list: [3] })).toEqual({ a: { c: 2, d: 3 }, list: [3], keep: 'x' });
    expect(target).toEqual({ a: { b: 1, c: 2 }, list: [1, 2], keep: 'x' });
    expect(applyMergePatch({ a: 1 }, 'scalar')).toBe('scalar');
  });

  it('applies the finalizer operations, and refuses them when the guarded value moved on', () => {
    const obj = { metadata: { resourceVersion: '5', finalizers: ['a', 'f'] } };
    expect(applyJsonPatch(obj, addFinalizerOps(obj.metadata, 'g') ?? [])).toEqual({ metadata: { resourceVersion: '5', finalizers: ['a', 'f', 'g'] } });
    expect(applyJsonPatch(obj, removeFinalizerOps(obj.metadata, 'f') ?? [])).toEqual({ metadata: { resourceVersion: '5', finalizers: ['a'] } });
    const moved = { metadata: { resourceVersion: '6', finalizers: ['a', 'h'] } };
    expect(() => applyJsonPatch(moved, addFinalizerOps(obj.metadata, 'g') ?? [])).toThrow(PatchTestFailedError);
    expect(() => applyJsonPatch(moved, removeFinalizerOps(obj.metadata, 'f') ?? [])).toThrow(/test failed at \/metadata\/finalizers\/1/);
  });

  it.each<[string, Parameters<typeof applyJsonPatch>[1], RegExp]>([
    ['removing a missing key', [{ op: 'remove', path: '/spec/x' }], /nothing to remove at \/spec\/x/],
    ['a path under a missing parent', [{ op: 'add', path: '/nope/x', value: 1 }], /no parent for \/nope\/x/],
    ['an index past the end', [{ op: 'add', path: '/list/5', value: 1 }], /bad index in \/list\/5/],
    ['move, which is not supported', [{ op: 'move', from: '/a', path: '/b' }], /op move is not supported/],
  ])('names the problem for %s', (_what, ops, message) => {
    expect(() => applyJsonPatch({ spec: {}, list: [] }, ops)).toThrow(message);
  });
});
