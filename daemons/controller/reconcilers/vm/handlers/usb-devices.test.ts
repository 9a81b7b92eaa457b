/**
 * The usbDevices handler on its own, over in-memory kinds: the claim it makes from the template, one
 * addresourceclaim per instance, a failing call that fails its device only (named, looked at again in
 * 5 s) and a dropped device whose detach fails staying listed. The decisions alone are in ../usb.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import type { InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { ResourceClaim, ResourceClaimTemplate } from '../../../../../shared/api/k8s/resource.js';
import type { USBDevice } from '../../../../../shared/api/resources/usb.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { KubeApiError } from '../../../../../shared/errors/index.js';
import { vm as vmOf } from '../../../../../tests/integration/controller/builders.js';
import { Expectations } from '../../../engine/expectations.js';
import { handlerContext, inMemoryDeps, InMemoryKind } from '../../../testing/in-memory.js';
import type { AddResourceClaimRequest, ClaimHotplug, RemoveResourceClaimRequest } from '../../vmbda/hotplug.js';
import { initVMState } from '../index.js';
import { USB_DEVICE_LABEL } from '../usb.js';
import { USB_CLAIMS_BY_VM, usbDevicesHandler } from './usb-devices.js';

const ready = (name: string): USBDevice => ({
  apiVersion: 'virtualization.deckhouse.io/v1alpha2',
  kind: 'USBDevice',
  metadata: { namespace: 'ns', name },
  status: {
    nodeName: 'n1',
    attributes: { vendorID: '0529', productID: '0001', name, speed: 480 },
    conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }],
  },
});
const template = (name: string): ResourceClaimTemplate => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceClaimTemplate',
  metadata: { namespace: 'ns', name: `${name}-template` },
  spec: {
    metadata: { annotations: { 'usb.virtualization.deckhouse.io/device-user': '64535' } },
    spec: { devices: { requests: [{ name: `req-${name}`, exactly: { deviceClassName: 'usb-devices.virtualization.deckhouse.io' } }] } },
  },
});
const instance = {
  apiVersion: 'internal.virtualization.deckhouse.io/v1',
  kind: 'InternalVirtualizationVirtualMachineInstance',
  metadata: { namespace: 'ns', name: 'web', uid: 'vmi-1' },
  spec: {},
  status: { phase: 'Running', nodeName: 'n1' },
} as unknown as InternalVirtualMachineInstance;

class RecordingHotplug implements ClaimHotplug {
  readonly calls: string[] = [];
  readonly failing = new Set<string>();
  addResourceClaim(req: AddResourceClaimRequest): Promise<void> {
    this.calls.push(`add ${req.name} ${req.resourceClaimTemplateName} ${req.requestName}`);
    return this.failing.has(req.name) ? Promise.reject(new KubeApiError('virt-api: boom', 500)) : Promise.resolve();
  }
  removeResourceClaim(req: RemoveResourceClaimRequest): Promise<void> {
    this.calls.push(`remove ${req.name}`);
    return this.failing.has(req.name) ? Promise.reject(new KubeApiError('virt-api: boom', 500)) : Promise.resolve();
  }
}

function world(devices: string[], status?: VirtualMachine['status']) {
  const vm: VirtualMachine = {
    ...vmOf({ namespace: 'ns', id: 'unit' }, 'web', 'generic', { usbDevices: devices.map((name) => ({ name })) }),
    metadata: { namespace: 'ns', name: 'web', uid: 'vm-uid' },
    ...(status === undefined ? {} : { status }),
  };
  const { deps } = inMemoryDeps({ seed: { vms: [vm], kvvmis: [instance] } });
  const usbDevices = new InMemoryKind<USBDevice>('USBDevice');
  const templates = new InMemoryKind<ResourceClaimTemplate>('ResourceClaimTemplate');
  const claims = new InMemoryKind<ResourceClaim>('ResourceClaim');
  claims.cache.addIndex(USB_CLAIMS_BY_VM, (c) => c.metadata.ownerReferences?.map((r) => r.uid) ?? []);
  usbDevices.seed(['usb-a', 'usb-b'].map(ready));
  templates.seed(['usb-a', 'usb-b'].map(template));
  const hotplug = new RecordingHotplug();
  deps.usb.set({ usbDevices: usbDevices.cache, templates: templates.cache, claims: claims.cache, claimClient: claims, hotplug });
  const handler = usbDevicesHandler(deps, new Expectations<true>(30_000));
  const pass = async () => {
    const s = { ...initVMState(vm), kvvmi: instance };
    const outcome = await handler.handle(s, handlerContext());
    return { s, outcome };
  };
  return { hotplug, claims, pass };
}

const usbCondition = (s: { status: VirtualMachine['status'] & object }) => s.status.conditions?.find((c) => c.type === 'USBDeviceReady');

describe('usbDevicesHandler', () => {
  it('reserves each device with a claim from its template and sends addresourceclaim once per instance', async () => {
    const w = world(['usb-a']);
    const first = await w.pass();
    expect(w.hotplug.calls).toEqual(['add usb-a usb-a-template req-usb-a']);
    const claim = w.claims.stored('ns/usb-a-claim');
    expect(claim?.metadata.ownerReferences).toEqual([
      { apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualMachine', name: 'web', uid: 'vm-uid', controller: true, blockOwnerDeletion: true },
    ]);
    expect(claim?.metadata.labels).toEqual({ [USB_DEVICE_LABEL]: 'usb-a' });
    expect(claim?.metadata.annotations).toEqual({ 'usb.virtualization.deckhouse.io/device-user': '64535' });
    expect(claim?.spec).toEqual(template('usb-a').spec.spec);
    expect(first.s.status.usbDevices).toEqual([{ name: 'usb-a', attached: false, ready: true }]);
    expect(first.outcome).toEqual({ requeueAfterMs: 30_000 });
    await w.pass();
    expect(w.hotplug.calls).toHaveLength(1);
    expect(w.claims.callsOf('create')).toHaveLength(1);
  });

  it('fails only the device whose call fails: named in the condition, looked at again in 5 s', async () => {
    const w = world(['usb-a', 'usb-b']);
    w.hotplug.failing.add('usb-a');
    const { s, outcome } = await w.pass();
    expect(w.hotplug.calls).toEqual(['add usb-a usb-a-template req-usb-a', 'add usb-b usb-b-template req-usb-b']);
    expect(usbCondition(s)).toMatchObject({
      status: 'False',
      reason: 'SomeDevicesNotReady',
      message: "USB device 'usb-a': addresourceclaim failed: virt-api: boom",
    });
    expect(outcome).toEqual({ requeueAfterMs: 5_000 });
    // Sent again on the next pass (the failed one was not remembered as sent); usb-b was.
    w.hotplug.failing.clear();
    await w.pass();
    expect(w.hotplug.calls.slice(2)).toEqual(['add usb-a usb-a-template req-usb-a']);
  });

  it('keeps a dropped device listed while its detach fails, and lets it go when the detach succeeds', async () => {
    const w = world([], { usbDevices: [{ name: 'usb-a', attached: true, ready: true }] });
    w.hotplug.failing.add('usb-a');
    const failed = await w.pass();
    expect(failed.s.status.usbDevices).toEqual([{ name: 'usb-a', attached: true, ready: true }]);
    expect(usbCondition(failed.s)?.message).toBe("USB device 'usb-a': removeresourceclaim failed: virt-api: boom");
    w.hotplug.failing.clear();
    const done = await w.pass();
    expect(done.s.status.usbDevices).toBeUndefined();
    expect(usbCondition(done.s)).toBeUndefined();
    expect(w.hotplug.calls).toEqual(['remove usb-a', 'remove usb-a']);
  });
});
