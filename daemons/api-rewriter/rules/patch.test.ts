import { describe, expect, it } from '@jest/globals';
import { KUBEVIRT_RULES, PatchError, Renamer, patchKindOf, rewritePatch } from './index.js';

const r = new Renamer(KUBEVIRT_RULES);
const INT = 'internal.virtualization.deckhouse.io';

describe('rewritePatch', () => {
  it('knows the patch content types', () => {
    expect(patchKindOf('application/json-patch+json')).toBe('json');
    expect(patchKindOf('application/merge-patch+json; charset=utf-8')).toBe('merge');
    expect(patchKindOf('application/strategic-merge-patch+json')).toBe('strategic');
    expect(patchKindOf('application/apply-patch+yaml')).toBe('apply');
    expect(patchKindOf('application/json')).toBeUndefined();
  });

  it('renames metadata in a merge patch, null values (deletions) included', () => {
    const patch = { metadata: { labels: { 'kubevirt.io/x': null, a: 'b' }, finalizers: ['kubevirt.io/f'] }, spec: { running: false } };
    expect(rewritePatch(r, 'merge', patch, 'rename', 'VirtualMachine')).toEqual({
      metadata: { labels: { [`kubevirt.${INT}/x`]: null, a: 'b' }, finalizers: [`kubevirt.${INT}/f`] },
      spec: { running: false },
    });
  });

  it('renames strategic merge patch finalizer directives and a CRD spec by the endpoint kind', () => {
    const smp = { metadata: { '$deleteFromPrimitiveList/finalizers': ['kubevirt.io/f'] } };
    expect(rewritePatch(r, 'strategic', smp, 'rename', 'Pod')).toEqual({ metadata: { '$deleteFromPrimitiveList/finalizers': [`kubevirt.${INT}/f`] } });
    const crdPatch = { spec: { group: 'kubevirt.io', names: { plural: 'virtualmachines', kind: 'VirtualMachine', shortNames: ['vm'] } } };
    const out = rewritePatch(r, 'merge', crdPatch, 'rename', 'CustomResourceDefinition') as typeof crdPatch;
    expect(out.spec.group).toBe(INT);
    expect(out.spec.names.shortNames).toEqual(['intvirtvm']);
  });

  it('renames JSON Patch paths with escaped label keys, values and from', () => {
    const ops = [
      { op: 'add', path: '/metadata/labels/kubevirt.io~1domain', value: 'vm1' },
      { op: 'remove', path: '/metadata/annotations/kubevirt.io~1x' },
      { op: 'add', path: '/metadata/finalizers/-', value: 'kubevirt.io/f' },
      { op: 'replace', path: '/metadata/labels', value: { 'vm.kubevirt.io/name': 'a' } },
      { op: 'add', path: '/metadata/ownerReferences/0', value: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name: 'v', uid: 'u' } },
      { op: 'move', from: '/metadata/labels/kubevirt.io~1a', path: '/metadata/labels/b' },
      { op: 'test', path: '/spec/running', value: true },
      { op: 'add', path: '/metadata/labels/app.kubernetes.io~1managed-by', value: 'virt-operator' },
    ];
    expect(rewritePatch(r, 'json', ops, 'rename', 'VirtualMachine')).toEqual([
      { op: 'add', path: `/metadata/labels/kubevirt.${INT}~1domain`, value: 'vm1' },
      { op: 'remove', path: `/metadata/annotations/kubevirt.${INT}~1x` },
      { op: 'add', path: '/metadata/finalizers/-', value: `kubevirt.${INT}/f` },
      { op: 'replace', path: '/metadata/labels', value: { [`vm.${INT}/name`]: 'a' } },
      { op: 'add', path: '/metadata/ownerReferences/0', value: { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachine', name: 'v', uid: 'u' } },
      { op: 'move', from: `/metadata/labels/kubevirt.${INT}~1a`, path: '/metadata/labels/b' },
      { op: 'test', path: '/spec/running', value: true },
      { op: 'add', path: '/metadata/labels/app.kubernetes.io~1managed-by', value: 'virt-operator-internal-virtualization' },
    ]);
  });

  it('restores what it renamed (JSON Patch round trip)', () => {
    const ops = [{ op: 'add', path: '/metadata/labels/kubevirt.io~1a~0b', value: 'x' }];
    const renamed = rewritePatch(r, 'json', structuredClone(ops), 'rename', 'Pod');
    expect(rewritePatch(r, 'json', renamed, 'restore', 'Pod')).toEqual(ops);
  });

  it('refuses malformed patches with an error naming the problem', () => {
    expect(() => rewritePatch(r, 'json', { op: 'add' }, 'rename', undefined)).toThrow(PatchError);
    expect(() => rewritePatch(r, 'json', [{ op: 'add' }], 'rename', undefined)).toThrow(/operation 0 needs string "op" and "path"/);
    expect(() => rewritePatch(r, 'json', [{ op: 'add', path: 'metadata' }], 'rename', undefined)).toThrow(/must start with "\/"/);
    expect(() => rewritePatch(r, 'merge', [1], 'rename', undefined)).toThrow(/merge patch must be a JSON object/);
  });
});
