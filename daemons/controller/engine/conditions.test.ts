import { describe, expect, it } from '@jest/globals';
import { removeCondition, setCondition } from './conditions.js';

const t0 = new Date('2026-01-01T00:00:00.500Z');
const t1 = new Date('2026-01-01T00:05:00Z');

describe('setCondition', () => {
  it('adds a condition stamped with the time in whole seconds and the generation', () => {
    expect(setCondition(undefined, { type: 'Ready', status: 'True', reason: 'Ok' }, t0, 3)).toEqual([
      { type: 'Ready', status: 'True', reason: 'Ok', message: '', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 3 },
    ]);
  });

  it('keeps lastTransitionTime when the status stays, so restating it changes nothing', () => {
    const first = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'A', message: 'x' }, t0);
    const again = setCondition(first, { type: 'Ready', status: 'False', reason: 'B', message: 'y' }, t1);
    expect(again[0]?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(again[0]?.reason).toBe('B');
  });

  it('moves lastTransitionTime when the status flips, and keeps the order of other conditions', () => {
    const list = setCondition(setCondition(undefined, { type: 'A', status: 'False', reason: 'R' }, t0), { type: 'B', status: 'True', reason: 'R' }, t0);
    const flipped = setCondition(list, { type: 'A', status: 'True', reason: 'R' }, t1);
    expect(flipped.map((c) => [c.type, c.lastTransitionTime])).toEqual([
      ['A', '2026-01-01T00:05:00Z'],
      ['B', '2026-01-01T00:00:00Z'],
    ]);
  });

  it('removes a condition, and the list when it was the last', () => {
    const list = setCondition(undefined, { type: 'A', status: 'True', reason: 'R' }, t0);
    expect(removeCondition(list, 'A')).toBeUndefined();
    expect(removeCondition(list, 'B')).toEqual(list);
  });
});
