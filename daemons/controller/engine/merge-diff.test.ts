import { describe, expect, it } from '@jest/globals';
import { deepEqual, mergeDiff } from './merge-diff.js';

describe('mergeDiff', () => {
  it.each([
    ['nothing changed', { a: 1, b: { c: [1, 2] } }, { a: 1, b: { c: [1, 2] } }, undefined],
    ['a changed scalar', { a: 1 }, { a: 2 }, { a: 2 }],
    ['a new key', { a: 1 }, { a: 1, b: 'x' }, { b: 'x' }],
    ['a removed key becomes null', { a: 1, b: 2 }, { a: 1 }, { b: null }],
    ['an undefined member counts as removed', { a: 1, b: 2 }, { a: 1, b: undefined }, { b: null }],
    ['nested objects recurse', { s: { x: 1, y: 2 } }, { s: { x: 1, y: 3 } }, { s: { y: 3 } }],
    ['arrays are replaced whole', { l: [1, 2, 3] }, { l: [1, 2] }, { l: [1, 2] }],
    ['an object replacing a scalar is sent whole', { a: 1 }, { a: { b: 1 } }, { a: { b: 1 } }],
  ])('%s', (_what, from, to, patch) => {
    expect(mergeDiff(from, to)).toEqual(patch);
  });

  it('treats undefined object members as absent when comparing', () => {
    expect(deepEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(deepEqual([1, { a: 2 }], [1, { a: 3 }])).toBe(false);
  });
});
