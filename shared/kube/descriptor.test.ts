import { describe, expect, it } from '@jest/globals';
import { clusterVirtualImage } from '../api/resources/virtualimage.js';
import { virtualMachine } from '../api/resources/virtualmachine.js';
import { apiVersionOf, descriptorOf, objectKey, resourcePath, type ResourceDescriptor } from './descriptor.js';

const widget: ResourceDescriptor = { group: 'test.example', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true };
const node: ResourceDescriptor = { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false };

describe('resource paths', () => {
  it.each([
    [widget, {}, '/apis/test.example/v1/widgets'],
    [widget, { namespace: 'ns' }, '/apis/test.example/v1/namespaces/ns/widgets'],
    [widget, { namespace: 'ns', name: 'a', subresource: 'status' }, '/apis/test.example/v1/namespaces/ns/widgets/a/status'],
    [node, { name: 'n1' }, '/api/v1/nodes/n1'],
    [node, { namespace: 'ignored', name: 'n1' }, '/api/v1/nodes/n1'],
  ])('builds the path of %o with %o', (d, parts, path) => {
    expect(resourcePath(d, parts)).toBe(path);
  });

  it('escapes names so they cannot leave their path segment', () => {
    expect(resourcePath(widget, { namespace: 'ns', name: 'a/../b' })).toBe('/apis/test.example/v1/namespaces/ns/widgets/a%2F..%2Fb');
  });

  it('writes the core group apiVersion without a group', () => {
    expect(apiVersionOf(node)).toBe('v1');
    expect(apiVersionOf(widget)).toBe('test.example/v1');
  });

  it('keys namespaced objects by namespace/name and cluster objects by name', () => {
    expect(objectKey({ namespace: 'ns', name: 'a' })).toBe('ns/a');
    expect(objectKey({ name: 'a' })).toBe('a');
  });
});

describe('the descriptor of a resource definition', () => {
  it.each([
    [virtualMachine, { group: 'virtualization.deckhouse.io', version: 'v1alpha2', plural: 'virtualmachines', kind: 'VirtualMachine', namespaced: true }],
    [
      clusterVirtualImage,
      { group: 'virtualization.deckhouse.io', version: 'v1alpha2', plural: 'clustervirtualimages', kind: 'ClusterVirtualImage', namespaced: false },
    ],
  ])('carries its REST coordinates and scope (%#)', (def, expected) => {
    expect(descriptorOf(def)).toEqual(expected);
  });
});
