import { describe, expect, it } from '@jest/globals';
import { compactJoin, formatDatetime, isSystemUser } from './common.js';

describe('formatDatetime', () => {
  it.each([
    ['2025-03-14T09:26:53.589793Z', '2025-03-14T09:26:53Z'],
    ['2025-03-14T09:26:53.999999Z', '2025-03-14T09:26:53Z'],
    ['2025-03-14T09:26:53Z', '2025-03-14T09:26:53Z'],
    ['2025-03-14T12:26:53.5+03:00', '2025-03-14T09:26:53Z'],
  ])('prints %s as %s (UTC, whole seconds, truncated)', (input, expected) => {
    expect(formatDatetime(input)).toBe(expected);
  });

  it('prints the zero time for a missing or unparsable timestamp', () => {
    expect(formatDatetime(undefined)).toBe('0001-01-01T00:00:00Z');
    expect(formatDatetime('yesterday')).toBe('0001-01-01T00:00:00Z');
  });
});

describe('isSystemUser', () => {
  it.each([
    ['system:serviceaccount:kube-system:gc', true],
    ['system:node:n1', true],
    ['system:serviceaccount:d8-service-accounts:ci', false],
    ['jane', false],
    ['systemd', false],
  ])('%s → %s', (user, expected) => {
    expect(isSystemUser(user)).toBe(expected);
  });
});

describe('compactJoin', () => {
  it('drops empty values and adjacent duplicates only', () => {
    expect(compactJoin(['a', 'a', '', undefined, 'b', 'a'])).toBe('a,b,a');
    expect(compactJoin(['', undefined])).toBeUndefined();
  });
});
