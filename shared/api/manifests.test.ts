import { describe, expect, it } from '@jest/globals';
import { PUBLIC_RESOURCES, ALL_RESOURCES } from './registry.js';
import { MANIFEST_CASES, wireForm } from './testdata/manifests.js';
import { judge, namesField, type ManifestCase, type Verdict } from './testdata/table.js';
import { checkObject } from './validate.js';

function zodVerdict(c: ManifestCase): Verdict {
  const result = checkObject(wireForm(c.manifest));
  return result.ok ? { accepted: true, object: result.value } : { accepted: false, problems: result.problems };
}

describe('the manifest table through the zod schemas', () => {
  it.each(MANIFEST_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(judge(c, zodVerdict(c))).toEqual([]);
  });

  it('has at least 40 cases with unique names', () => {
    expect(MANIFEST_CASES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(MANIFEST_CASES.map((c) => c.name)).size).toBe(MANIFEST_CASES.length);
  });

  it('has a valid case for every kind and an invalid one for every public kind', () => {
    const kinds = (valid: boolean): Set<string> => new Set(MANIFEST_CASES.filter((c) => c.expect.valid === valid).map((c) => c.manifest.kind));
    expect([...kinds(true)].sort()).toEqual(ALL_RESOURCES.map((d) => d.kind).sort());
    for (const def of PUBLIC_RESOURCES) expect(kinds(false)).toContain(def.kind);
  });
});

describe('judging a verdict against a case', () => {
  const valid: ManifestCase = {
    name: 'v',
    manifest: { apiVersion: 'a/v1', kind: 'K', metadata: { name: 'k' } },
    expect: { valid: true, defaults: { 'spec.mode': 'Auto' } },
  };
  const invalid: ManifestCase = { ...valid, expect: { valid: false, field: 'spec.cpu' } };

  it('agrees when a valid manifest is accepted with its defaults', () => {
    expect(judge(valid, { accepted: true, object: { spec: { mode: 'Auto' } } })).toEqual([]);
  });

  it('reports a valid manifest that was rejected or lost a default', () => {
    expect(judge(valid, { accepted: false, problems: 'spec: Required value' })).toHaveLength(1);
    expect(judge(valid, { accepted: true, object: { spec: {} } })).toHaveLength(1);
  });

  it('reports an invalid manifest that was accepted', () => {
    expect(judge(invalid, { accepted: true, object: {} })).toHaveLength(1);
  });

  it('reports a rejection that names another field, even a longer path', () => {
    expect(judge(invalid, { accepted: false, problems: [{ path: 'spec.cpu', message: 'x' }] })).toEqual([]);
    expect(judge(invalid, { accepted: false, problems: [{ path: 'spec.cpu.cores', message: 'x' }] })).toHaveLength(1);
    expect(judge(invalid, { accepted: false, problems: 'spec.cpu.cores: Invalid value' })).toHaveLength(1);
  });

  it('finds a field path in apiserver messages of every shape', () => {
    expect(namesField('spec.cpu: Required value', 'spec.cpu')).toBe(true);
    expect(namesField('strict decoding error: unknown field "spec.cpus"', 'spec.cpus')).toBe(true);
    expect(namesField('.spec.blockDeviceRefs: Too many: 17: must have at most 16 items', 'spec.blockDeviceRefs')).toBe(true);
    expect(namesField('spec.blockDeviceRefs[0].kind: Unsupported value', 'spec.blockDeviceRefs')).toBe(false);
    expect(namesField('spec.cpus: unknown', 'spec.cpu')).toBe(false);
    expect(namesField('in spec.cpu.', 'spec.cpu')).toBe(true);
    // Server-side apply names a list-map element by its key.
    const ssa = '.spec.virtualDiskTemplates[name="root"].spec.dataSource.upload: field not declared in schema';
    expect(namesField(ssa, 'spec.virtualDiskTemplates[0].spec.dataSource.upload')).toBe(true);
    expect(namesField(ssa, 'spec.virtualDiskTemplates[0].spec.dataSource')).toBe(false);
    expect(namesField('spec.a[1].b: bad', 'spec.a[0].b')).toBe(false);
  });
});
