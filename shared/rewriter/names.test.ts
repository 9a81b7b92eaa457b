import { describe, expect, it } from '@jest/globals';
import { KUBEVIRT_RULES, Renamer } from './index.js';

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
});
