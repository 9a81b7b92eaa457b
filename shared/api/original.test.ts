/**
 * Our generated CRDs against the original module's published ones (facts in
 * testdata/original/original-crds.json, extracted by testdata/original/extract.ts), compared by
 * property path under spec: type, pattern, enum, default and required. What still differs is listed,
 * with a reason, in testdata/original/allowed.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { ALLOWED_DIFFERENCES } from './testdata/original/allowed.js';
import { differences, originalFacts } from './testdata/original/compare.js';
import { flatten } from './testdata/original/flatten.js';

const allowed = new Set(ALLOWED_DIFFERENCES.flatMap((g) => g.differences));

describe('our CRDs compared with the original by property path', () => {
  const found = differences();

  it('differ only where the allow-list says why', () => {
    expect(found.filter((d) => !allowed.has(d.key)).map((d) => `${d.key} (${d.detail})`)).toEqual([]);
  });

  it('have an allow-list with no stale entry and a reason for each group', () => {
    const keys = new Set(found.map((d) => d.key));
    expect([...allowed].filter((k) => !keys.has(k))).toEqual([]);
    for (const g of ALLOWED_DIFFERENCES) expect(g.reason.length).toBeGreaterThan(20);
    expect(allowed.size).toBe(ALLOWED_DIFFERENCES.reduce((n, g) => n + g.differences.length, 0));
  });

  it('cover the published kinds, each read at a recorded commit', () => {
    const facts = originalFacts();
    expect(Object.keys(facts.kinds).length).toBeGreaterThanOrEqual(12);
    for (const commit of Object.values(facts.files)) expect(commit).toMatch(/^[0-9a-f]{40}$/);
  });
});

describe('the comparison itself', () => {
  it('reports a changed pattern, a path only one side has, and a version not served', () => {
    const facts = originalFacts();
    const vm = facts.kinds['VirtualMachine']?.['v1alpha2'] ?? {};
    vm['spec.cpu.coreFraction'] = { type: 'string', pattern: '^changed$' };
    vm['spec.brandNew'] = { type: 'string' };
    facts.kinds['VirtualMachine'] = { ...facts.kinds['VirtualMachine'], v9: {} };
    const keys = differences(facts).map((d) => d.key);
    expect(keys).toEqual(
      expect.arrayContaining([
        'VirtualMachine v1alpha2 spec.cpu.coreFraction: pattern',
        'VirtualMachine v1alpha2 spec.brandNew: only in the original',
        'VirtualMachine v9: not served',
      ]),
    );
  });
});

describe('flattening a schema into facts by path', () => {
  it('names list items, map values and int-or-string, and keeps only the compared facts', () => {
    const schema = {
      type: 'object',
      required: ['b', 'a'],
      description: 'dropped',
      properties: {
        a: { type: 'array', items: { type: 'string', enum: ['y', 'x'], minLength: 1 } },
        b: { type: 'object', additionalProperties: { type: 'string', pattern: '^p$' } },
        q: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true, default: 1 },
      },
    };
    expect(flatten(schema, 'spec')).toEqual({
      spec: { type: 'object', required: ['a', 'b'] },
      'spec.a': { type: 'array' },
      'spec.a[]': { type: 'string', enum: ['x', 'y'] },
      'spec.b': { type: 'object' },
      'spec.b{}': { type: 'string', pattern: '^p$' },
      'spec.q': { type: 'int-or-string', default: 1 },
    });
  });
});
