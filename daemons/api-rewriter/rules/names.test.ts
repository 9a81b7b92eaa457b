import { describe, expect, it } from '@jest/globals';
import { KUBEVIRT_RULES, Renamer } from './index.js';
import { MEMO_SIZE, mapRecord } from './names.js';
import { CREATED_BY_LABEL, DOMAIN_ANNOTATION, LAUNCHER_LABEL, LAUNCHER_VALUE, MIGRATION_LABEL, VM_NAME_LABEL } from '../../../shared/api/internal/launcher.js';

const r = new Renamer(KUBEVIRT_RULES);
const INT = 'internal.virtualization.deckhouse.io';

describe('Renamer', () => {
  it('renames groups, resources and kinds and restores them', () => {
    expect(r.group('kubevirt.io', 'rename')).toBe(INT);
    expect(r.group(INT, 'restore')).toBe('kubevirt.io');
    expect(r.group('snapshot.kubevirt.io', 'rename')).toBe(`snapshot.${INT}`);
    expect(r.resourceName('kubevirt.io', 'virtualmachines/status', 'rename')).toBe('internalvirtualizationvirtualmachines/status');
    expect(r.resourceName(INT, 'internalvirtualizationvirtualmachines/status', 'restore')).toBe('virtualmachines/status');
    expect(r.typeMeta('kubevirt.io/v1', 'VirtualMachine', 'rename')).toEqual({ apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachine' });
    expect(r.typeMeta(`${INT}/v1`, 'InternalVirtualizationVirtualMachineList', 'restore')).toEqual({
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineList',
    });
    expect(r.crdName('virtualmachines.kubevirt.io', 'rename')).toBe(`internalvirtualizationvirtualmachines.${INT}`);
    expect(r.crdName(`internalvirtualizationcdis.cdi.${INT}`, 'restore')).toBe('cdis.cdi.kubevirt.io');
  });

  it('passes unknown names through unchanged in both directions', () => {
    for (const dir of ['rename', 'restore'] as const) {
      expect(r.group('apps', dir)).toBe('apps');
      expect(r.group('virtualization.deckhouse.io', dir)).toBe('virtualization.deckhouse.io');
      expect(r.resourceName('kubevirt.io', 'unknownthings', dir)).toBe('unknownthings');
      expect(r.typeMeta('v1', 'Pod', dir)).toEqual({ apiVersion: 'v1', kind: 'Pod' });
      expect(r.typeMeta('kubevirt.io/v1', 'Unknown', dir)).toEqual({ apiVersion: 'kubevirt.io/v1', kind: 'Unknown' });
      expect(r.key('labels', 'app', dir)).toBe('app');
      expect(r.crdName('widgets.example.com', dir)).toBe('widgets.example.com');
    }
  });

  it('renames label names, prefixes and values', () => {
    expect(r.key('labels', 'kubevirt.io', 'rename')).toBe(`kubevirt.${INT}`);
    expect(r.key('labels', 'kubevirt.io/domain', 'rename')).toBe(`kubevirt.${INT}/domain`);
    expect(r.key('labels', 'vm.kubevirt.io/name', 'rename')).toBe(`vm.${INT}/name`);
    expect(r.key('labels', 'cpu-feature.node.kubevirt.io/vmx', 'rename')).toBe('cpu-feature.node.virtualization.deckhouse.io/vmx');
    expect(r.key('labels', 'node-labeller.kubevirt.io/skip-node', 'rename')).toBe('node-labeller.virtualization.deckhouse.io/skip-node');
    expect(r.labelValue('app.kubernetes.io/managed-by', 'virt-operator', 'rename')).toBe('virt-operator-internal-virtualization');
    expect(r.labelValue('app.kubernetes.io/managed-by', 'virt-operator-internal-virtualization', 'restore')).toBe('virt-operator');
    expect(r.labelValue('app', 'virt-operator', 'rename')).toBe('virt-operator');
    expect(r.key('annotations', 'certificates.kubevirt.io/x', 'rename')).toBe(`certificates.kubevirt.${INT}/x`);
    expect(r.key('finalizers', 'kubevirt.io/virtualMachineControllerFinalize', 'rename')).toBe(`kubevirt.${INT}/virtualMachineControllerFinalize`);
    expect(r.key('finalizers', 'foregroundDeleteVirtualMachine', 'rename')).toBe('foregroundDeleteVirtualMachine');
  });

  it('keeps a label already in original form on the server apart with the preserved prefix, both ways', () => {
    // On the server: one renamed label and one written in original form by someone else.
    const server = { [`kubevirt.${INT}/a`]: '1', 'kubevirt.io/a': '2' };
    const seen = r.labelMap(server, 'restore') as Record<string, string>;
    expect(seen).toEqual({ 'kubevirt.io/a': '1', 'preserved-original-kubevirt.io/a': '2' });
    expect(r.labelMap(seen, 'rename')).toEqual(server);
  });

  it('has markers that find every renamed and original name, and no marker in unrelated text', () => {
    const found = (s: string): boolean => r.markers.some((m) => s.includes(m));
    expect(found(`"apiVersion":"${INT}/v1"`)).toBe(true);
    expect(found('"kubevirt.io/domain"')).toBe(true);
    expect(found('"cpu-feature.node.virtualization.deckhouse.io/vmx"')).toBe(true);
    expect(found('"managed-by":"virt-operator"')).toBe(true);
    expect(found('"preserved-original-x"')).toBe(true);
    expect(found('{"kind":"Pod","apiVersion":"v1","metadata":{"labels":{"app":"web"}}}')).toBe(false);
    expect(found('{"apiVersion":"virtualization.deckhouse.io/v1alpha2","kind":"VirtualMachine"}')).toBe(false);
  });

  it('answers the same after its memo of names filled up and started over', () => {
    const fresh = new Renamer(KUBEVIRT_RULES);
    const names = Array.from({ length: 2 * MEMO_SIZE + 3 }, (_, i) => `kubevirt.io/n${i}`);
    for (const pass of [1, 2]) {
      for (const [i, name] of names.entries()) {
        expect([pass, fresh.key('labels', name, 'rename')]).toEqual([pass, `kubevirt.${INT}/n${i}`]);
        expect([pass, fresh.fieldKey('labels', `f:${name}`, 'rename')]).toEqual([pass, `f:kubevirt.${INT}/n${i}`]);
      }
    }
    expect(fresh.fieldKey('finalizers', 'v:"kubevirt.io/virtualMachineControllerFinalize"', 'rename')).toBe(
      `v:"kubevirt.${INT}/virtualMachineControllerFinalize"`,
    );
    // Keys that are not field-set names, or broken ones, stay as they are.
    expect(fresh.fieldKey('labels', '.', 'rename')).toBe('.');
    expect(fresh.fieldKey('finalizers', 'v:"unterminated', 'rename')).toBe('v:"unterminated');
    expect(fresh.fieldKey('finalizers', 'v:42', 'rename')).toBe('v:42');
  });
});

describe('mapRecord', () => {
  const upper = (k: string): string => (k.startsWith('x') ? k.toUpperCase() : k);

  it('returns the object itself when no entry changes', () => {
    const labels = { a: '1', b: '2' };
    expect(mapRecord(labels, upper)).toBe(labels);
    expect(mapRecord(labels, upper, (_k, _nk, v) => v)).toBe(labels);
  });

  it('copies once an entry changes, keeping the order and every entry before and after it', () => {
    const labels = { a: '1', x1: '2', b: '3', x2: '4' };
    const out = mapRecord(labels, upper);
    expect(out).not.toBe(labels);
    expect(Object.entries(out as object)).toEqual([
      ['a', '1'],
      ['X1', '2'],
      ['b', '3'],
      ['X2', '4'],
    ]);
    expect(labels).toEqual({ a: '1', x1: '2', b: '3', x2: '4' });
    // A changed value alone also copies; the value function sees the key before and after.
    const seen: string[] = [];
    const values = mapRecord(
      labels,
      (k) => k,
      (k, nk, v) => (seen.push(k), k === 'b' ? 'B' : v),
    );
    expect(values).toEqual({ a: '1', x1: '2', b: 'B', x2: '4' });
    expect(seen).toEqual(['a', 'x1', 'b', 'x2']);
    const pairs: string[] = [];
    mapRecord(labels, upper, (k, nk, v) => (pairs.push(`${k}>${nk}`), v));
    expect(pairs).toEqual(['a>a', 'x1>X1', 'b>b', 'x2>X2']);
  });

  it('returns anything but a plain object as it is', () => {
    const list = ['x1'];
    expect(mapRecord(list, upper)).toBe(list);
    expect(mapRecord(null, upper)).toBeNull();
    expect(mapRecord('x1', upper)).toBe('x1');
  });
});

describe("a virt-launcher pod's names", () => {
  it('are stored under the names shared/api/internal/launcher.ts gives the controller, audit, subresources and simulator', () => {
    // What upstream virt-controller v1.6.0 writes on a launcher pod (and a migration target pod).
    const labels = { 'kubevirt.io': 'virt-launcher', 'kubevirt.io/created-by': 'uid-1', 'vm.kubevirt.io/name': 'web', 'kubevirt.io/migrationJobUID': 'm-1' };
    expect(r.labelMap(labels, 'rename')).toEqual({
      [LAUNCHER_LABEL]: LAUNCHER_VALUE,
      [CREATED_BY_LABEL]: 'uid-1',
      [VM_NAME_LABEL]: 'web',
      [MIGRATION_LABEL]: 'm-1',
    });
    expect(r.annotationMap({ 'kubevirt.io/domain': 'web' }, 'rename')).toEqual({ [DOMAIN_ANNOTATION]: 'web' });
  });
});
