import { describe, expect, it } from '@jest/globals';
import { labelSelectorKeys, labelsMatchingAs, splitLabelSelector } from './label-selector.js';

describe('label selectors', () => {
  it('splits on commas outside parentheses', () => {
    expect(splitLabelSelector('a=b,c in (x,y),!d')).toEqual(['a=b', 'c in (x,y)', '!d']);
    expect(splitLabelSelector('')).toEqual(['']);
  });

  it('names the keys of every requirement form once', () => {
    expect(labelSelectorKeys('a=b, b==c,c!=d,e in (1,2),f notin (3),g,!h,a')).toEqual(['a', 'b', 'c', 'e', 'f', 'g', 'h']);
    expect(labelSelectorKeys('')).toEqual([]);
    expect(labelSelectorKeys('(,)')).toEqual([]);
  });

  it("copies the source's values of the selector's keys, and nothing the source lacks", () => {
    const node = { 'test/scope': 'abc', zone: 'z1', other: 'x' };
    expect(labelsMatchingAs('test/scope=abc,zone in (z1,z2),!missing', node)).toEqual({ 'test/scope': 'abc', zone: 'z1' });
    expect(labelsMatchingAs('test/scope=abc', undefined)).toEqual({});
  });
});
