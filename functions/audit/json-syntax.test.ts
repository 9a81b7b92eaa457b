import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { jsonSyntaxError } from './json-syntax.js';

describe('locating a JSON syntax error by scanning, not by the engine’s message', () => {
  it.each<[string, string, { offset: number; endOfInput: boolean }]>([
    ['a bare word (it could have started null)', 'nope at position 42', { offset: 1, endOfInput: false }],
    ['words that look like an engine message', 'Unexpected end', { offset: 0, endOfInput: false }],
    ['a truncated object', '{"a": [1, 2', { offset: 11, endOfInput: true }],
    ['a truncated string', '{"kind":"Event","auditID":"a', { offset: 28, endOfInput: true }],
    ['a truncated literal', '[tru', { offset: 4, endOfInput: true }],
    ['a wrong literal', '[trye]', { offset: 3, endOfInput: false }],
    ['an unquoted value', '{"message": broken', { offset: 12, endOfInput: false }],
    ['a trailing comma', '[1,]', { offset: 3, endOfInput: false }],
    ['a missing colon', '{"a" 1}', { offset: 5, endOfInput: false }],
    ['a mismatched bracket', '{"a": [1}', { offset: 8, endOfInput: false }],
    ['text after the value', '{} {}', { offset: 3, endOfInput: false }],
    ['a leading zero', '01', { offset: 1, endOfInput: false }],
    ['a bad escape', '"\\x"', { offset: 2, endOfInput: false }],
    ['a short unicode escape', '"\\u12g4"', { offset: 5, endOfInput: false }],
    ['a raw control character in a string', '"a\tb"', { offset: 2, endOfInput: false }],
    ['a fraction without digits', '1.', { offset: 2, endOfInput: true }],
    ['nothing at all', '   ', { offset: 3, endOfInput: true }],
  ])('finds %s', (_what, text, expected) => {
    expect(() => JSON.parse(text) as unknown).toThrow(SyntaxError); // only ever asked about text JSON.parse refused
    expect(jsonSyntaxError(text)).toEqual(expected);
  });

  it('finds nothing wrong in any JSON.stringify output, at any nesting depth', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => jsonSyntaxError(JSON.stringify(v, null, 1)) === undefined));
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(jsonSyntaxError(deep)).toBeUndefined();
  });

  it('calls every strict prefix of an object or array an unexpected end of input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.array(fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue())), fc.nat(), (v, cut) => {
        const text = JSON.stringify(v);
        const prefix = text.slice(0, cut % text.length);
        return jsonSyntaxError(prefix)?.endOfInput === true;
      }),
    );
  });
});
