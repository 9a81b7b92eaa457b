import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { decodeObject } from './decode.js';

const strict = z.strictObject({
  metadata: z.strictObject({ name: z.string() }),
  spec: z.strictObject({
    size: z.number(),
    mode: z.enum(['a', 'b']).default('a'),
    items: z.array(z.strictObject({ name: z.string() })).default([]),
  }),
});

const name = (): string => 'Widget ns/w';

describe('lenient object decoding', () => {
  it('keeps fields a strict schema does not know, at every level, and still applies defaults', () => {
    const raw = {
      metadata: { name: 'w', managedFields: [{ manager: 'x' }] },
      spec: { size: 1, newField: { deep: true }, items: [{ name: 'i', color: 'red' }] },
      extra: 'top',
    };
    const decoded = decodeObject(strict, raw, name);
    expect(decoded).toEqual({
      ok: true,
      value: { ...raw, spec: { ...raw.spec, mode: 'a' } },
      unknownFields: expect.arrayContaining(['metadata.managedFields', 'spec.newField', 'spec.items[0].color', 'extra']) as unknown,
    });
    expect(raw.spec).not.toHaveProperty('mode'); // the input is not changed
  });

  it('keeps unknown fields that a stripping schema would drop', () => {
    const stripping = z.object({ metadata: z.object({ name: z.string() }), spec: z.object({ size: z.number() }) });
    const decoded = decodeObject(stripping, { metadata: { name: 'w', uid: 'u' }, spec: { size: 1, color: 'red' } }, name);
    expect(decoded.ok && decoded.value).toEqual({ metadata: { name: 'w', uid: 'u' }, spec: { size: 1, color: 'red' } });
  });

  it('names the object and every real problem, leaving unknown fields out of them', () => {
    const decoded = decodeObject(strict, { metadata: { name: 'w' }, spec: { size: 'big', mode: 'c', unknown: 1 } }, name);
    expect(decoded.ok).toBe(false);
    if (decoded.ok) return;
    expect(decoded.error.problems.map((p) => p.path)).toEqual(['spec.size', 'spec.mode']);
    expect(decoded.error.message).toMatch(/^Widget ns\/w does not match its schema: spec\.size: /);
    expect([decoded.error.code, decoded.error.status]).toEqual(['KUBE_OBJECT_INVALID', 502]);
  });
});
