import { describe, expect, it } from '@jest/globals';
import { BadRequestError } from '../../errors/index.js';
import { decodeHeaderValue, encodeHeaderValue } from './header-value.js';

describe('CloudEvents header values (HTTP binding 3.1.3.2)', () => {
  it.each([
    ['vm.created', 'vm.created'],
    ['Euro € 😀', 'Euro%20%E2%82%AC%20%F0%9F%98%80'],
    ['say "hi"', 'say%20%22hi%22'],
    ['100%', '100%25'],
    ['tab\there', 'tab%09here'],
  ])('encodes %j as %j and decodes it back', (value, header) => {
    expect(encodeHeaderValue(value)).toBe(header);
    expect(decodeHeaderValue('ce-x', header)).toBe(value);
  });

  it('accepts lower-case escapes and needless ones', () => {
    expect(decodeHeaderValue('ce-x', '%e2%82%ac%41')).toBe('€A');
  });

  it.each(['%', '%4', '%zz', '%C0%A0', '%FF', '%E2%82'])('rejects %j, not UTF-8 after percent-decoding', (header) => {
    expect(() => decodeHeaderValue('ce-subject', header)).toThrow(BadRequestError);
    expect(() => decodeHeaderValue('ce-subject', header)).toThrow(`ce-subject ${JSON.stringify(header)} is not correctly percent-encoded UTF-8`);
  });
});
