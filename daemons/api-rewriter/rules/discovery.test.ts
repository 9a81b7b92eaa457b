import { describe, expect, it } from '@jest/globals';
import { KUBEVIRT_RULES, Renamer, planRequest, restoreApiPath, restoreDocument, restoreSchemaName } from './index.js';

const r = new Renamer(KUBEVIRT_RULES);
const INT = 'internal.virtualization.deckhouse.io';
const restore = (url: string, doc: unknown): unknown => restoreDocument(r, planRequest(r, url), doc);

describe('discovery and OpenAPI restore', () => {
  it('shows renamed groups under their original names in /apis and drops an original duplicate', () => {
    const doc = {
      kind: 'APIGroupList',
      groups: [
        { name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } },
        { name: INT, versions: [{ groupVersion: `${INT}/v1`, version: 'v1' }], preferredVersion: { groupVersion: `${INT}/v1`, version: 'v1' } },
        { name: 'kubevirt.io', versions: [{ groupVersion: 'kubevirt.io/v1', version: 'v1' }] },
      ],
    };
    const out = restore('/apis', doc) as typeof doc;
    expect(out.groups.map((g) => g.name)).toEqual(['apps', 'kubevirt.io']);
    expect(out.groups[1]).toEqual({
      name: 'kubevirt.io',
      versions: [{ groupVersion: 'kubevirt.io/v1', version: 'v1' }],
      preferredVersion: { groupVersion: 'kubevirt.io/v1', version: 'v1' },
    });
  });

  it('restores an APIResourceList with subresources, short names and categories', () => {
    const doc = {
      kind: 'APIResourceList',
      groupVersion: `${INT}/v1`,
      resources: [
        {
          name: 'internalvirtualizationvirtualmachines',
          singularName: 'internalvirtualizationvirtualmachine',
          namespaced: true,
          kind: 'InternalVirtualizationVirtualMachine',
          shortNames: ['intvirtvm'],
          categories: ['intvirt'],
          verbs: ['get'],
        },
        {
          name: 'internalvirtualizationvirtualmachines/status',
          singularName: '',
          namespaced: true,
          kind: 'InternalVirtualizationVirtualMachine',
          verbs: ['get'],
        },
      ],
    };
    expect(restore('/apis/kubevirt.io/v1', doc)).toEqual({
      kind: 'APIResourceList',
      groupVersion: 'kubevirt.io/v1',
      resources: [
        {
          name: 'virtualmachines',
          singularName: 'virtualmachine',
          namespaced: true,
          kind: 'VirtualMachine',
          shortNames: ['vm'],
          categories: ['all'],
          verbs: ['get'],
        },
        { name: 'virtualmachines/status', singularName: '', namespaced: true, kind: 'VirtualMachine', verbs: ['get'] },
      ],
    });
  });

  it('restores aggregated discovery (APIGroupDiscoveryList)', () => {
    const doc = {
      kind: 'APIGroupDiscoveryList',
      apiVersion: 'apidiscovery.k8s.io/v2',
      items: [
        {
          metadata: { name: INT },
          versions: [
            {
              version: 'v1',
              resources: [
                {
                  resource: 'internalvirtualizationvirtualmachines',
                  singularResource: 'internalvirtualizationvirtualmachine',
                  responseKind: { group: INT, version: 'v1', kind: 'InternalVirtualizationVirtualMachine' },
                  shortNames: ['intvirtvm'],
                  categories: ['intvirt'],
                  subresources: [{ subresource: 'status', responseKind: { group: INT, version: 'v1', kind: 'InternalVirtualizationVirtualMachine' } }],
                },
              ],
            },
          ],
        },
        { metadata: { name: 'batch' }, versions: [] },
      ],
    };
    const out = restore('/apis', doc) as typeof doc;
    expect(out.items.map((i) => i.metadata.name)).toEqual(['kubevirt.io', 'batch']);
    expect(out.items[0]?.versions[0]?.resources[0]).toEqual({
      resource: 'virtualmachines',
      singularResource: 'virtualmachine',
      responseKind: { group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine' },
      shortNames: ['vm'],
      categories: ['all'],
      subresources: [{ subresource: 'status', responseKind: { group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine' } }],
    });
  });

  it('restores OpenAPI paths, schema names, refs and group-version-kinds', () => {
    expect(restoreApiPath(r, `/apis/${INT}/v1/namespaces/{namespace}/internalvirtualizationvirtualmachines/{name}/status`)).toBe(
      '/apis/kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{name}/status',
    );
    expect(restoreSchemaName(r, 'io.deckhouse.virtualization.internal.v1.InternalVirtualizationVirtualMachine')).toBe('io.kubevirt.v1.VirtualMachine');
    expect(restoreSchemaName(r, 'io.k8s.api.core.v1.Pod')).toBe('io.k8s.api.core.v1.Pod');
    const index = {
      paths: {
        [`apis/${INT}/v1`]: { serverRelativeURL: `/openapi/v3/apis/${INT}/v1?hash=A` },
        'apis/apps/v1': { serverRelativeURL: '/openapi/v3/apis/apps/v1?hash=B' },
      },
    };
    expect(restore('/openapi/v3', index)).toEqual({
      paths: {
        'apis/kubevirt.io/v1': { serverRelativeURL: '/openapi/v3/apis/kubevirt.io/v1?hash=A' },
        'apis/apps/v1': { serverRelativeURL: '/openapi/v3/apis/apps/v1?hash=B' },
      },
    });
    const doc = {
      paths: {
        [`/apis/${INT}/v1/internalvirtualizationvirtualmachines`]: {
          get: {
            responses: { 200: { $ref: '#/components/schemas/io.deckhouse.virtualization.internal.v1.InternalVirtualizationVirtualMachineList' } },
            'x-kubernetes-group-version-kind': { group: INT, version: 'v1', kind: 'InternalVirtualizationVirtualMachine' },
          },
        },
      },
      components: {
        schemas: {
          'io.deckhouse.virtualization.internal.v1.InternalVirtualizationVirtualMachine': {
            'x-kubernetes-group-version-kind': [{ group: INT, version: 'v1', kind: 'InternalVirtualizationVirtualMachine' }],
          },
        },
      },
    };
    expect(restore('/openapi/v3/apis/kubevirt.io/v1', doc)).toEqual({
      paths: {
        '/apis/kubevirt.io/v1/virtualmachines': {
          get: {
            responses: { 200: { $ref: '#/components/schemas/io.kubevirt.v1.VirtualMachineList' } },
            'x-kubernetes-group-version-kind': { group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine' },
          },
        },
      },
      components: {
        schemas: { 'io.kubevirt.v1.VirtualMachine': { 'x-kubernetes-group-version-kind': [{ group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine' }] } },
      },
    });
  });
});
