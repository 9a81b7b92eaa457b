import { describe, expect, it } from '@jest/globals';
import { RoutedVmSchema, routedVmOnly, vmAddressOf } from './kube.js';

const vm = RoutedVmSchema.parse({
  apiVersion: 'virtualization.deckhouse.io/v1alpha2',
  kind: 'VirtualMachine',
  metadata: {
    namespace: 'ns',
    name: 'vm-1',
    uid: 'u1',
    resourceVersion: '42',
    deletionTimestamp: '2026-12-05T00:00:00Z',
    labels: { app: 'web' },
    annotations: { note: 'x'.repeat(1000) },
    managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:spec': {} } }],
  },
  spec: { virtualMachineClassName: 'generic', cpu: { cores: 1 }, memory: { size: '1Gi' } },
  status: { ipAddress: '10.66.0.5', nodeName: 'node-1', phase: 'Running', conditions: [{ type: 'Running', status: 'True' }] },
});

describe("the VM informer's cache transform", () => {
  it('keeps what the route needs and what the informer needs, and nothing else', () => {
    const thin = routedVmOnly(vm);
    expect(vmAddressOf(thin)).toEqual(vmAddressOf(vm));
    expect(vmAddressOf(thin)).toEqual({ key: 'ns/vm-1', ip: '10.66.0.5', node: 'node-1', deleting: true });
    expect(thin.metadata).toMatchObject({ namespace: 'ns', name: 'vm-1', uid: 'u1', resourceVersion: '42' });
    expect(JSON.parse(JSON.stringify(thin))).toEqual({
      metadata: { namespace: 'ns', name: 'vm-1', uid: 'u1', resourceVersion: '42', deletionTimestamp: '2026-12-05T00:00:00Z' },
      status: { ipAddress: '10.66.0.5', nodeName: 'node-1' },
    });
  });

  it('keeps a VM without status without one', () => {
    const bare = routedVmOnly(RoutedVmSchema.parse({ metadata: { namespace: 'ns', name: 'new', resourceVersion: '1' } }));
    expect(bare.status).toBeUndefined();
    expect(vmAddressOf(bare)).toEqual({ key: 'ns/new', ip: undefined, node: undefined, deleting: false });
  });
});
