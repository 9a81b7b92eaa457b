import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { load } from 'js-yaml';
import { toYaml, type Json } from './yaml.js';

describe('the YAML emitter', () => {
  it('writes maps, lists and scalars in block style with a header comment', () => {
    const doc = { a: 1, b: [{ c: 'x', d: true }, 'z'], e: {}, f: [], g: null };
    expect(toYaml(doc, ['generated'])).toBe(['# generated', 'a: 1', 'b:', '- c: x', '  d: true', '- z', 'e: {}', 'f: []', 'g: null', ''].join('\n'));
  });

  it('quotes strings a YAML 1.1 reader would take for booleans, numbers or null', () => {
    for (const s of ['yes', 'No', 'on', 'off', 'y', 'true', 'null', '1', '1.5', '0x1f', '', ' lead', 'a: b', '#x', '*x', '~'])
      expect(toYaml({ k: s })).toBe(`k: ${JSON.stringify(s)}\n`);
  });

  it('writes multi-line strings as literal blocks', () => {
    expect(toYaml({ k: 'line one\nline two' })).toBe('k: |-\n  line one\n  line two\n');
  });

  it('reads back as the same value for any JSON document', () => {
    const json: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.string(),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('v'), { maxLength: 4 }),
        fc.dictionary(fc.string({ minLength: 1 }), tie('v'), { maxKeys: 4 }),
      ),
    })).v;
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1 }), json, { maxKeys: 5 }), (doc) => {
        expect(load(toYaml(doc))).toEqual(Object.keys(doc).length === 0 ? {} : doc);
      }),
    );
  });
});
