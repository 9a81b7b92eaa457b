import { describe, expect, it } from '@jest/globals';
import { KUBEVIRT_RULES, Renamer, rewriteObject } from './index.js';

const r = new Renamer(KUBEVIRT_RULES);
const INT = 'internal.virtualization.deckhouse.io';
const clone = <T>(v: T): T => structuredClone(v);

const vm = {
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachine',
  metadata: {
    name: 'vm1',
    namespace: 'ns',
    labels: { 'kubevirt.io/vm': 'vm1', app: 'web', 'app.kubernetes.io/managed-by': 'virt-operator' },
    annotations: { 'kubevirt.io/latest-observed-api-version': 'v1', note: 'x' },
    finalizers: ['kubevirt.io/virtualMachineControllerFinalize', 'other'],
    ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vmi', uid: 'u' }],
    managedFields: [
      {
        apiVersion: 'kubevirt.io/v1',
        manager: 'kubectl',
        fieldsV1: {
          'f:metadata': {
            'f:labels': { '.': {}, 'f:kubevirt.io/vm': {}, 'f:app': {} },
            'f:finalizers': { '.': {}, 'v:"kubevirt.io/virtualMachineControllerFinalize"': {} },
          },
          'f:spec': { 'f:running': {} },
        },
      },
    ],
  },
  spec: { template: { metadata: { labels: { 'kubevirt.io/domain': 'vm1' } } }, running: true },
};

describe('rewriteObject', () => {
  it('renames a VirtualMachine and restores exactly the original', () => {
    const renamed = rewriteObject(r, clone(vm), 'rename') as typeof vm;
    expect(renamed.apiVersion).toBe(`${INT}/v1`);
    expect(renamed.kind).toBe('InternalVirtualizationVirtualMachine');
    expect(renamed.metadata.labels).toEqual({
      [`kubevirt.${INT}/vm`]: 'vm1',
      app: 'web',
      'app.kubernetes.io/managed-by': 'virt-operator-internal-virtualization',
    });
    expect(renamed.metadata.annotations).toEqual({ [`kubevirt.${INT}/latest-observed-api-version`]: 'v1', note: 'x' });
    expect(renamed.metadata.finalizers).toEqual([`kubevirt.${INT}/virtualMachineControllerFinalize`, 'other']);
    expect(renamed.metadata.ownerReferences[0]).toMatchObject({ apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachineInstance' });
    expect(renamed.metadata.managedFields[0]?.apiVersion).toBe(`${INT}/v1`);
    expect(renamed.metadata.managedFields[0]?.fieldsV1['f:metadata']).toEqual({
      'f:labels': { '.': {}, [`f:kubevirt.${INT}/vm`]: {}, 'f:app': {} },
      'f:finalizers': { '.': {}, [`v:"kubevirt.${INT}/virtualMachineControllerFinalize"`]: {} },
    });
    expect(renamed.spec.running).toBe(true);
    expect(rewriteObject(r, renamed, 'restore')).toEqual(vm);
  });

  it('restores the items of a list of renamed objects', () => {
    const list = {
      apiVersion: `${INT}/v1`,
      kind: 'InternalVirtualizationVirtualMachineList',
      metadata: { resourceVersion: '9' },
      items: [rewriteObject(r, clone(vm), 'rename')],
    };
    expect(rewriteObject(r, list, 'restore')).toEqual({
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineList',
      metadata: { resourceVersion: '9' },
      items: [vm],
    });
  });

  it('restores the row objects of a Table', () => {
    const table = {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      rows: [{ cells: ['vm1'], object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { labels: { [`vm.${INT}/name`]: 'a' } } } }],
    };
    const out = rewriteObject(r, table, 'restore') as typeof table;
    expect(out.rows[0]?.object.metadata.labels).toEqual({ 'vm.kubevirt.io/name': 'a' });
  });

  it('renames a CRD name, group and names, and restores names, accepted names and categories', () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'virtualmachines.kubevirt.io' },
      spec: {
        group: 'kubevirt.io',
        names: {
          kind: 'VirtualMachine',
          listKind: 'VirtualMachineList',
          plural: 'virtualmachines',
          singular: 'virtualmachine',
          shortNames: ['vm', 'vms'],
          categories: ['all'],
        },
      },
    };
    const renamed = rewriteObject(r, clone(crd), 'rename') as typeof crd;
    expect(renamed.metadata.name).toBe(`internalvirtualizationvirtualmachines.${INT}`);
    expect(renamed.spec).toEqual({
      group: INT,
      names: {
        kind: 'InternalVirtualizationVirtualMachine',
        listKind: 'InternalVirtualizationVirtualMachineList',
        plural: 'internalvirtualizationvirtualmachines',
        singular: 'internalvirtualizationvirtualmachine',
        shortNames: ['intvirtvm', 'intvirtvms'],
        categories: ['intvirt'],
      },
    });
    const withStatus = { ...renamed, status: { acceptedNames: { ...renamed.spec.names } } };
    const restored = rewriteObject(r, withStatus, 'restore') as typeof withStatus;
    expect(restored.spec).toEqual(crd.spec);
    expect(restored.status.acceptedNames).toEqual(crd.spec.names);
    // A CRD of some other group is left alone.
    const other = {
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: { group: 'example.com', names: { plural: 'widgets', kind: 'Widget' } },
    };
    expect(rewriteObject(r, clone(other), 'rename')).toEqual(other);
  });

  it('renames RBAC rules and webhook rules, keeping subresources and wildcards', () => {
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      rules: [{ apiGroups: ['kubevirt.io', ''], resources: ['virtualmachines', 'virtualmachineinstances/status', 'pods', '*'], verbs: ['get'] }],
    };
    const renamed = rewriteObject(r, clone(role), 'rename') as typeof role;
    expect(renamed.rules[0]).toEqual({
      apiGroups: [INT, ''],
      resources: ['internalvirtualizationvirtualmachines', 'internalvirtualizationvirtualmachineinstances/status', 'pods', '*'],
      verbs: ['get'],
    });
    expect(rewriteObject(r, renamed, 'restore')).toEqual(role);
    const hook = {
      kind: 'ValidatingWebhookConfiguration',
      webhooks: [{ name: 'w', rules: [{ apiGroups: ['kubevirt.io'], resources: ['virtualmachines'], operations: ['CREATE'] }] }],
    };
    const renamedHook = rewriteObject(r, clone(hook), 'rename') as typeof hook;
    expect(renamedHook.webhooks[0]?.rules[0]).toMatchObject({ apiGroups: [INT], resources: ['internalvirtualizationvirtualmachines'] });
  });

  it('renames pod node selectors, affinity and template labels of workloads', () => {
    const pod = {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { labels: { 'kubevirt.io': 'virt-launcher' } },
      spec: {
        nodeSelector: { 'cpu-model.node.kubevirt.io/Haswell': 'true' },
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'cpu-feature.node.kubevirt.io/vmx', operator: 'In', values: ['true'] }] }],
            },
          },
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, podAffinityTerm: { labelSelector: { matchLabels: { 'kubevirt.io/created-by': 'x' } } } },
            ],
          },
        },
      },
    };
    const out = rewriteObject(r, clone(pod), 'rename') as typeof pod;
    expect(out.metadata.labels).toEqual({ [`kubevirt.${INT}`]: 'virt-launcher' });
    expect(out.spec.nodeSelector).toEqual({ 'cpu-model.node.virtualization.deckhouse.io/Haswell': 'true' });
    expect(out.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]?.matchExpressions[0]?.key).toBe(
      'cpu-feature.node.virtualization.deckhouse.io/vmx',
    );
    expect(out.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]?.podAffinityTerm.labelSelector.matchLabels).toEqual({
      [`kubevirt.${INT}/created-by`]: 'x',
    });
    expect(rewriteObject(r, out, 'restore')).toEqual(pod);
    const deploy = {
      kind: 'Deployment',
      spec: { selector: { matchLabels: { 'kubevirt.io': 'virt-api' } }, template: { metadata: { labels: { 'kubevirt.io': 'virt-api' } }, spec: {} } },
    };
    const d = rewriteObject(r, clone(deploy), 'rename') as typeof deploy;
    expect(d.spec.selector.matchLabels).toEqual({ [`kubevirt.${INT}`]: 'virt-api' });
    expect(d.spec.template.metadata.labels).toEqual({ [`kubevirt.${INT}`]: 'virt-api' });
  });

  it('renames PVC data sources, Event objects and Service selectors', () => {
    const pvc = { kind: 'PersistentVolumeClaim', spec: { dataSourceRef: { apiGroup: 'cdi.kubevirt.io', kind: 'VolumeImportSource', name: 's' } } };
    expect((rewriteObject(r, clone(pvc), 'rename') as typeof pvc).spec.dataSourceRef).toEqual({
      apiGroup: `cdi.${INT}`,
      kind: 'InternalVirtualizationVolumeImportSource',
      name: 's',
    });
    const ev = {
      kind: 'Event',
      apiVersion: 'v1',
      involvedObject: { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachineInstance', name: 'x' },
    };
    expect((rewriteObject(r, clone(ev), 'restore') as typeof ev).involvedObject).toEqual({
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstance',
      name: 'x',
    });
    const svc = { kind: 'Service', spec: { selector: { 'kubevirt.io': 'virt-api' } } };
    expect((rewriteObject(r, clone(svc), 'rename') as typeof svc).spec.selector).toEqual({ [`kubevirt.${INT}`]: 'virt-api' });
  });

  it('restores error Status details and names inside the message', () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'NotFound',
      message: `internalvirtualizationvirtualmachines.${INT} "vm9" not found`,
      details: { name: 'vm9', group: INT, kind: 'internalvirtualizationvirtualmachines' },
      code: 404,
    };
    const out = rewriteObject(r, status, 'restore') as typeof status;
    expect(out.message).toBe('virtualmachines.kubevirt.io "vm9" not found');
    expect(out.details).toEqual({ name: 'vm9', group: 'kubevirt.io', kind: 'virtualmachines' });
    const invalid = {
      kind: 'Status',
      message: `InternalVirtualizationVirtualMachine.${INT} "x" is invalid`,
      details: { group: INT, kind: 'InternalVirtualizationVirtualMachine' },
    };
    const out2 = rewriteObject(r, invalid, 'restore') as typeof invalid;
    expect(out2.message).toBe('VirtualMachine.kubevirt.io "x" is invalid');
    expect(out2.details.kind).toBe('VirtualMachine');
  });

  it('leaves unrelated objects and odd shapes untouched', () => {
    const odd = [null, 5, 'text', [1, 2], { kind: 7, metadata: 'x' }, { kind: 'Pod', metadata: { labels: null, finalizers: 'nope' }, spec: { affinity: [] } }];
    for (const v of odd) {
      for (const dir of ['rename', 'restore'] as const) expect(rewriteObject(r, clone(v), dir)).toEqual(v);
    }
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { app: 'x' } }, data: { 'kubevirt.io': 'stays' } };
    expect(rewriteObject(r, clone(cm), 'rename')).toEqual(cm);
  });
});
