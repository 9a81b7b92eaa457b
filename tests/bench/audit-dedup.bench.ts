/**
 * The audit function's duplicate filter: the cost of recording a key when the filter is full (its
 * 100,000 keys, each insert evicting the oldest) as a ratio to the same inserts into an empty filter,
 * measured in the same run. The old Map-as-FIFO got 20-100x slower at capacity; target: within 2x.
 * It was a unit test retried five times (issue 32): a speed ratio on a shared machine is a benchmark.
 *
 * Knobs: BENCH_ROUNDS (rounds per filter, the first of each a warm-up), BENCH_PER_ROUND (keys per round).
 */
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { DuplicateFilter } from '../../functions/audit/dedup.js';
import { knobs, print } from './lib.js';

const settings = knobs(
  z.object({
    BENCH_ROUNDS: env.int(9, 2).describe('Rounds per filter; the first of each warms the JIT up and is not counted.'),
    BENCH_PER_ROUND: env.int(20_000, 1).describe('Keys recorded per round.'),
  }),
);

const CAPACITY = 100_000;
const STAGE = 'ResponseComplete';
const { BENCH_ROUNDS: rounds, BENCH_PER_ROUND: perRound } = settings;
const keys = Array.from({ length: CAPACITY + perRound * rounds }, (_, i) => `audit-${i.toString(36)}-0000-4000-8000`);

/** Nanoseconds per key recorded into `filter`, keys [from, from + perRound). */
function timeInserts(filter: DuplicateFilter, from: number): number {
  const start = process.hrtime.bigint();
  for (let i = from; i < from + perRound; i++) filter.isDuplicate(keys[i] ?? '', STAGE);
  return Number(process.hrtime.bigint() - start) / perRound;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const full = new DuplicateFilter({ ttlMs: 3_600_000, capacity: CAPACITY });
for (let i = 0; i < CAPACITY; i++) full.isDuplicate(keys[i] ?? '', STAGE);
const emptyNs: number[] = [];
const fullNs: number[] = [];
for (let round = 0; round < rounds; round++) {
  const from = CAPACITY + round * perRound;
  emptyNs.push(timeInserts(new DuplicateFilter({ ttlMs: 3_600_000, capacity: CAPACITY }), from));
  fullNs.push(timeInserts(full, from));
  if (full.size !== CAPACITY) throw new Error(`the full filter holds ${full.size} keys, not ${CAPACITY}`);
}
const empty = median(emptyNs.slice(1));
const atCapacity = median(fullNs.slice(1));
print(
  `\n== audit duplicate filter: recording a key, full (${CAPACITY} keys) vs empty (target <= 2x) ==\n` +
    `empty ${empty.toFixed(0)} ns/key  full ${atCapacity.toFixed(0)} ns/key  ratio ${(atCapacity / empty).toFixed(2)}x`,
);
