import { describe, expect, it } from '@jest/globals';
import { formatMicroTime, formatMicroTimeFromDate, nowMicros, parseMicroTime } from './microtime.js';

describe('MicroTime', () => {
  it.each([
    [Date.UTC(2026, 11, 2, 14, 9, 2) * 1000 + 123456, '2026-12-02T14:09:02.123456Z'],
    [Date.UTC(2026, 11, 2, 14, 9, 2) * 1000, '2026-12-02T14:09:02.000000Z'],
    [Date.UTC(2026, 11, 2, 14, 9, 2) * 1000 + 7, '2026-12-02T14:09:02.000007Z'],
    [0, '1970-01-01T00:00:00.000000Z'],
    [-1, '1969-12-31T23:59:59.999999Z'],
  ])('formats %d µs as %s with exactly six fractional digits', (micros, text) => {
    expect(formatMicroTime(micros)).toBe(text);
    expect(formatMicroTime(micros)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('formats a Date by padding its milliseconds to microseconds', () => {
    expect(formatMicroTimeFromDate(new Date('2026-12-02T14:09:02.123Z'))).toBe('2026-12-02T14:09:02.123000Z');
  });

  it('rejects a non-integer microsecond count', () => {
    expect(() => formatMicroTime(1.5)).toThrow(RangeError);
  });

  it.each([
    ['2026-12-02T14:09:02.123456Z', Date.UTC(2026, 11, 2, 14, 9, 2) * 1000 + 123456],
    ['2026-12-02T14:09:02Z', Date.UTC(2026, 11, 2, 14, 9, 2) * 1000],
    ['2026-12-02T14:09:02.1Z', Date.UTC(2026, 11, 2, 14, 9, 2) * 1000 + 100000],
    ['2026-12-02T14:09:02.123456789Z', Date.UTC(2026, 11, 2, 14, 9, 2) * 1000 + 123456],
    ['2026-12-02T16:09:02.000001+02:00', Date.UTC(2026, 11, 2, 14, 9, 2) * 1000 + 1],
    ['2026-12-02T09:39:02.5-04:30', Date.UTC(2026, 11, 2, 14, 9, 2) * 1000 + 500000],
    ['2026-12-02t14:09:02z', Date.UTC(2026, 11, 2, 14, 9, 2) * 1000],
  ])('parses %s', (text, micros) => {
    expect(parseMicroTime(text)).toBe(micros);
  });

  it.each([
    '',
    '2026-12-02',
    '2026-12-02 14:09:02Z',
    '2026-12-02T14:09:02.Z',
    '2026-12-02T14:09:02.123456',
    '2026-02-30T00:00:00Z',
    '2026-12-02T24:00:00Z',
    'garbage',
  ])('refuses %j', (text) => {
    expect(() => parseMicroTime(text)).toThrow(RangeError);
  });

  it('round-trips format and parse to the microsecond', () => {
    for (const micros of [0, 1, 999_999, 1_790_000_000_123_456, 4_102_444_799_999_999]) {
      expect(parseMicroTime(formatMicroTime(micros))).toBe(micros);
    }
  });

  it('reads now from the injected millisecond clock', () => {
    expect(nowMicros(() => 1_000.25)).toBe(1_000_250);
  });
});
