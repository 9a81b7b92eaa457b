import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { check } from '../validate.js';
import { dateTime, fieldForType, fieldPathSegments, immutable, listMap, withRules } from './schema.js';
import { structuralSchema } from './structural.js';

describe('CEL rules on a schema', () => {
  const schema = withRules(z.strictObject({ type: z.enum(['A', 'B']), a: z.string().optional() }), [immutable('frozen'), fieldForType('a', 'A')]);

  it('are emitted as x-kubernetes-validations, with field paths', () => {
    expect(structuralSchema(schema)['x-kubernetes-validations']).toEqual([
      { rule: 'self == oldSelf', message: 'frozen' },
      { rule: "has(self.a) == (self.type == 'A')", message: 'a is required when type is A and forbidden otherwise', fieldPath: '.a' },
    ]);
  });

  it('are checked by zod at the field path, except transition rules that need the old object', () => {
    expect(check(schema, { type: 'A', a: 'x' })).toEqual({ ok: true, value: { type: 'A', a: 'x' } });
    expect(check(schema, { type: 'B', a: 'x' })).toMatchObject({ ok: false, problems: [{ path: 'a' }] });
  });

  it('accumulate when attached twice', () => {
    const twice = withRules(schema, [{ rule: 'true', message: 'm', holds: () => true }]);
    expect(structuralSchema(twice)['x-kubernetes-validations']).toHaveLength(3);
  });

  it('accept only dotted field paths', () => {
    expect(fieldPathSegments('.a.b')).toEqual(['a', 'b']);
    expect(fieldPathSegments(undefined)).toEqual([]);
    expect(() => fieldPathSegments(".a['b']")).toThrow(/unsupported/);
  });
});

describe('a list map', () => {
  it('rejects two items with the same key, at the list', () => {
    const schema = listMap(z.strictObject({ name: z.string() }), ['name']);
    expect(check(schema, [{ name: 'a' }, { name: 'b' }]).ok).toBe(true);
    expect(check(schema, [{ name: 'a' }, { name: 'a' }])).toMatchObject({ ok: false, problems: [{ path: '' }] });
    expect(structuralSchema(schema)).toMatchObject({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] });
  });
});

describe('a date-time', () => {
  it.each(['2026-01-02T03:04:05Z', '2026-01-02T03:04:05.123Z', '2026-01-02T03:04:05+03:00'])('accepts %s', (s) => {
    expect(dateTime().safeParse(s).success).toBe(true);
  });
  it.each(['2026-01-02', 'yesterday', '2026-13-02T03:04:05Z'])('rejects %s', (s) => {
    expect(dateTime().safeParse(s).success).toBe(false);
  });
});
