/** JSON Patch from a changed copy: vectors and a round-trip property. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { applyJsonPatch as applyPatch } from '../../shared/kube/index.js';
import { diff } from './patch.js';

describe('diff', () => {
  it.each([
    ['an added field', { a: 1 }, { a: 1, b: 2 }, [{ op: 'add', path: '/b', value: 2 }]],
    ['a removed field', { a: 1, b: 2 }, { a: 1 }, [{ op: 'remove', path: '/b' }]],
    ['a replaced value', { a: { b: 'x' } }, { a: { b: 'y' } }, [{ op: 'replace', path: '/a/b', value: 'y' }]],
    [
      'keys with / and ~',
      { 'a/b': 1, 'c~d': 1 },
      { 'a/b': 2, 'c~d': 2 },
      [
        { op: 'replace', path: '/a~1b', value: 2 },
        { op: 'replace', path: '/c~0d', value: 2 },
      ],
    ],
    ['an item of an equal-length array', { l: [{ id: 1 }, {}] }, { l: [{ id: 1 }, { id: 2 }] }, [{ op: 'add', path: '/l/1/id', value: 2 }]],
    ['an array of another length', { l: [1] }, { l: [1, 2] }, [{ op: 'replace', path: '/l', value: [1, 2] }]],
    ['nothing', { a: [1, { b: null }] }, { a: [1, { b: null }] }, []],
  ])('describes %s', (_what, from, to, ops) => {
    expect(diff(from, to)).toEqual(ops);
  });

  it('turns any JSON value into any other when applied', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const from = { spec: a };
        const to = { spec: b };
        expect(applyPatch(from, diff(from, to))).toEqual(to);
      }),
      { numRuns: 500 },
    );
  });
});
