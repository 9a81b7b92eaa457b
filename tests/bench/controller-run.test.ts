import { describe, expect, it } from '@jest/globals';
import { queueMeans, reconcileCounts } from './controller-run.js';

describe("the controller's counters between two readings", () => {
  const before = new Map([
    ['reconcile vm ok', 10],
    ['reconcile vm conflict', 1],
    ['reconcile vmip ok', 4],
    ['queue sum vm', 2],
    ['queue count vm', 10],
    ['work sum vm', 1],
    ['work count vm', 10],
    ['queue count vmip', 4],
    ['depth vm', 3],
  ]);
  const after = new Map([
    ['reconcile vm ok', 40],
    ['reconcile vm conflict', 1],
    ['reconcile vmip ok', 9],
    ['reconcile vmclass ok', 2],
    ['queue sum vm', 8],
    ['queue count vm', 40],
    ['work sum vm', 4],
    ['work count vm', 40],
    ['queue count vmip', 4],
    ['depth vm', 0],
  ]);

  it('counts the reconciles of the window by controller and result, the most first, those that did not move left out', () => {
    expect(reconcileCounts(before, after)).toEqual([
      ['vm ok', 30],
      ['vmip ok', 5],
      ['vmclass ok', 2],
    ]);
  });

  it("gives the mean wait and work of the window's reconciles per queue that moved", () => {
    expect(queueMeans(before, after)).toEqual([['vm', { waitMs: 200, workMs: 100 }]]);
  });
});
