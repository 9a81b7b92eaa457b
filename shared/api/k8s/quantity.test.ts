import { describe, expect, it } from '@jest/globals';
import { formatBytes, formatCpu, parseQuantity } from './quantity.js';

describe('parseQuantity', () => {
  it.each([
    ['10Gi', 10 * 2 ** 30],
    ['1.5G', 1.5e9],
    ['500m', 0.5],
    ['1e3', 1000],
    ['2E', 2e18],
    [1024, 1024],
    ['+.5Ki', 512],
  ])('reads %p', (q, value) => expect(parseQuantity(q)).toBe(value));

  it.each(['', 'Gi', '10 Gi', '10gi', 'ten'])('refuses %p', (q) => expect(parseQuantity(q)).toBeUndefined());

  it('formats byte counts with binary suffixes', () => {
    expect([formatBytes(2 ** 30), formatBytes(1.5 * 2 ** 30), formatBytes(512 * 2 ** 20), formatBytes(1000)]).toEqual(['1Gi', '1.5Gi', '512Mi', '1000']);
  });
  it('formats CPU as whole cores or millicores', () => {
    expect([formatCpu(2), formatCpu(1.5), formatCpu(0.1)]).toEqual(['2', '1500m', '100m']);
  });
});
