/**
 * Our generated CRDs against the original module's published ones (facts in
 * testdata/original/original-crds.json, extracted by testdata/original/extract.ts), compared by
 * property path under spec: type, pattern, enum, default and required. What still differs is listed,
 * with a reason, in testdata/original/allowed.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { toCRD } from './k8s/crd.js';
import { PUBLIC_RESOURCES } from './registry.js';
import { CRD_LABELS } from './resources/common.js';
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

/**
 * String fields naming another object may be empty only where the reason is given: the original
 * requires at least one character on its references (the fixture does not carry minLength, so this
 * is checked on our side), and an empty name must never reach an admission lookup.
 */
const MAY_BE_EMPTY: Record<string, string> = {
  'spec.persistentVolumeClaim.storageClassName':
    'no minLength in the original either; empty means no class named, as in a PVC, and admission then looks nothing up',
  'spec.virtualDiskTemplates[].spec.persistentVolumeClaim.storageClassName': 'the same disk spec in the pool template',
  'spec.virtualMachineIPAddressRef.name': 'a lease ref the controller clears on release, as the original does',
  'spec.virtualMachineIPAddressRef.namespace': 'a lease ref the controller clears on release, as the original does',
  'spec.virtualMachineMACAddressRef.name': 'a lease ref the controller clears on release, as the original does',
  'spec.virtualMachineMACAddressRef.namespace': 'a lease ref the controller clears on release, as the original does',
  'spec.dataSource.objectRef.namespace': 'a CEL rule requires it for namespaced source kinds, with the original message',
  'spec.assignedNamespace': 'empty takes the USB device back from its namespace',
};
const K8S_CORE = /affinity|Affinity|topologySpreadConstraints|tolerations|Selector|matchExpressions/;
const REFERENCE = /(^|[.[\]])(name|namespace|\w+Name|\w+Namespace)$/;

function emptyAllowed(node: Record<string, unknown>): boolean {
  if (typeof node['minLength'] === 'number' && node['minLength'] > 0) return false;
  return typeof node['pattern'] !== 'string' || new RegExp(node['pattern']).test('');
}

function referenceFields(node: Record<string, unknown>, path: string, out: Map<string, boolean>): void {
  if (node['type'] === 'string' && REFERENCE.test(path) && !K8S_CORE.test(path)) out.set(path, emptyAllowed(node));
  for (const [k, child] of Object.entries((node['properties'] ?? {}) as Record<string, Record<string, unknown>>)) referenceFields(child, `${path}.${k}`, out);
  if (node['items'] !== null && typeof node['items'] === 'object') referenceFields(node['items'] as Record<string, unknown>, `${path}[]`, out);
}

describe('reference fields of our CRDs', () => {
  const fields = new Map<string, boolean>();
  for (const def of PUBLIC_RESOURCES) {
    const crd = toCRD(def, CRD_LABELS) as { spec: { versions: { schema: { openAPIV3Schema: { properties: Record<string, Record<string, unknown>> } } }[] } };
    for (const v of crd.spec.versions) {
      const spec = v.schema.openAPIV3Schema.properties['spec'];
      if (spec !== undefined) referenceFields(spec, 'spec', fields);
    }
  }

  it('require at least one character, except where the reason is given', () => {
    expect(fields.size).toBeGreaterThanOrEqual(40);
    const empty = [...new Set([...fields].filter(([, may]) => may).map(([p]) => p))].sort();
    expect(empty).toEqual(Object.keys(MAY_BE_EMPTY).sort());
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
