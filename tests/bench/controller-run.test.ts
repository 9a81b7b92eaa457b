import { describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { controllerCounters, queueMeans, reconcileCounts } from './controller-run.js';

describe("the controller's counters read from its /metrics", () => {
  it('reads reconciles, queue depths and the memory series (label-less lines too)', async () => {
    const text = [
      '# HELP nodejs_heap_size_total_bytes Process heap size from Node.js in bytes.',
      'nodejs_heap_size_total_bytes 104857600',
      'nodejs_heap_size_used_bytes 52428800',
      'nodejs_external_memory_bytes 1048576',
      'd8_virtualization_controller_reconcile_total{controller="vm",result="ok"} 7',
      'workqueue_depth{name="vm"} 3',
      'workqueue_queue_duration_seconds_sum{name="vm"} 1.5',
      '',
    ].join('\n');
    const server = createServer((_req, res) => res.end(text));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const counts = await controllerCounters(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`);
      expect(Object.fromEntries(counts)).toEqual({
        'heap total': 104857600,
        'heap used': 52428800,
        external: 1048576,
        'reconcile vm ok': 7,
        'depth vm': 3,
        'queue sum vm': 1.5,
      });
    } finally {
      server.close();
    }
  });
});

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
