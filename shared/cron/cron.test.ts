import { describe, expect, test } from '@jest/globals';
import { CronSyntaxError, parseCron } from './index.js';

const at = (iso: string): Date => new Date(iso);

describe('parseCron', () => {
  test.each([
    ['0 2 * * *', '2026-12-07T00:10:00Z', '2026-12-07T02:00:00Z'],
    ['0 2 * * *', '2026-12-07T02:00:00Z', '2026-12-08T02:00:00Z'],
    ['*/15 * * * *', '2026-12-07T00:10:30Z', '2026-12-07T00:15:00Z'],
    ['5,25,45 3 * * *', '2026-12-07T03:26:00Z', '2026-12-07T03:45:00Z'],
    ['0 0 1 * *', '2026-12-07T00:00:00Z', '2027-01-01T00:00:00Z'],
    ['0 0 * * mon', '2026-12-07T00:00:00Z', '2026-12-14T00:00:00Z'],
    ['0 0 * * 7', '2026-12-07T00:00:00Z', '2026-12-13T00:00:00Z'],
    ['30 1 * feb-mar *', '2026-12-07T00:00:00Z', '2027-02-01T01:30:00Z'],
    ['0 0 29 2 *', '2026-12-07T00:00:00Z', '2028-02-29T00:00:00Z'],
    ['0 0 13 * 5', '2026-12-07T00:00:00Z', '2026-12-11T00:00:00Z'],
    ['@daily', '2026-12-07T00:10:00Z', '2026-12-08T00:00:00Z'],
    ['@hourly', '2026-12-07T00:10:00Z', '2026-12-07T01:00:00Z'],
    ['@midnight', '2026-12-07T00:10:00Z', '2026-12-08T00:00:00Z'],
    ['10-20/5 * * * ?', '2026-12-07T00:16:00Z', '2026-12-07T00:20:00Z'],
  ])('%s after %s fires at %s', (spec, after, expected) => {
    expect(parseCron(spec).next(at(after)).toISOString()).toBe(at(expected).toISOString());
  });

  test.each([
    ['', 'the schedule is empty'],
    ['0 2 * *', 'expected 5 fields'],
    ['0 2 * * * *', 'expected 5 fields'],
    ['61 * * * *', 'minute "61": '],
    ['0 24 * * *', 'hour "24": '],
    ['0 0 0 * *', 'day of month "0": '],
    ['0 0 * 13 *', 'month "13": '],
    ['0 0 * * funday', 'day of week "funday": '],
    ['*/0 * * * *', 'minute "*/0": '],
    ['5-1 * * * *', 'minute "5-1": '],
    ['@sometimes', 'unknown descriptor'],
    ['0 0 31 2 *', '"0 0 31 2 *": '],
    ['every night', 'expected 5 fields'],
  ])('%j is refused: %s', (spec, message) => {
    const run = (): Date => parseCron(spec).next(at('2026-12-07T00:00:00Z'));
    expect(run).toThrow(CronSyntaxError);
    try {
      run();
    } catch (err: unknown) {
      expect((err as CronSyntaxError).problems[0]?.message).toContain(message);
    }
  });
});
