/**
 * A VM's spec.usbDevices on the real apiserver: the DRA daemon publishes a fixture node's dongle, the
 * controller (USB reconcilers on) makes its NodeUSBDevice, USBDevice and template in the test
 * namespace, and a running VM naming it gets a ResourceClaim reserving it, an addresourceclaim, and
 * status.usbDevices / USBDeviceReady. KubeVirt is the simulator plus KubeVirtClaimFake (the instance's
 * host-device status). A second VM, an unknown device, a device that is not ready, a failing virt-api
 * and removing the entry are covered too.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { usbDeviceName } from '../../../daemons/dra/devices.js';
import { writeFixtureSysfs, type FixtureDevice } from '../../../daemons/dra/discovery/index.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import {
  ResourceClaimSchema,
  ResourceClaimTemplateSchema,
  resourceClaimDescriptor,
  resourceClaimTemplateDescriptor,
  type ResourceClaim,
} from '../../../shared/api/k8s/resource.js';
import { NodeUSBDeviceSchema, USBDeviceSchema, nodeUSBDevice, usbDevice } from '../../../shared/api/resources/usb.js';
import type { VirtualMachine } from '../../../shared/api/resources/virtualmachine.js';
import { USBIP_HS_USED_ANNOTATION, USBIP_SS_USED_ANNOTATION, USBIP_TOTAL_PORTS_ANNOTATION } from '../../../shared/api/usbip.js';
import { descriptorOf, type KubeClient, type ResourceClient } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { gone, mainKube, testClients } from '../controller/fixtures.js';
import { startWorld, type World } from '../controller/world.js';
import { fixtureNode, labelIntoScope, startDaemon, TEST_MANAGER, type FixtureNode, type RunningDaemon } from './harness.js';
import { KubeVirtClaimFake } from './kubevirt-claim-fake.js';

const dongle: FixtureDevice = { busId: '4-1', devNum: 6, vendorId: '0529', productId: '0001', manufacturer: 'AKS', product: 'HASP HL', serial: 'VM-1' };

let kube: KubeClient;
let c: Clients;
let w: World;
let node: FixtureNode;
let daemon: RunningDaemon;
let fake: KubeVirtClaimFake;
let device: string;

const usbCondition = (v: VirtualMachine): { status: string; reason: string; message: string } | undefined =>
  v.status?.conditions?.find((x) => x.type === 'USBDeviceReady');
const setPorts = async (hsUsed: number): Promise<void> => {
  await c.nodes.mergePatch(
    { name: w.nodeName },
    {
      metadata: {
        annotations: {
          [USBIP_TOTAL_PORTS_ANNOTATION]: '8',
          [USBIP_HS_USED_ANNOTATION]: String(hsUsed),
          [USBIP_SS_USED_ANNOTATION]: '0',
        },
      },
    },
  );
};
const claims = (): ResourceClient<ResourceClaim> => kube.resource(resourceClaimDescriptor, ResourceClaimSchema, TEST_MANAGER);

beforeAll(async () => {
  kube = mainKube();
  c = testClients(kube);
  fake = new KubeVirtClaimFake(c);
  node = await fixtureNode('vm-usb');
  await writeFixtureSysfs(node.sysRoot, [dongle]);
  daemon = startDaemon(node);
  await daemon.handle.started;
  w = await startWorld(kube, c, 'vm-usb', { controller: { usb: true, claims: fake } });
  // The fixture node joins the world's scope: its controller takes the node's slices (labelled after
  // the start: the node's event brings them in).
  await labelIntoScope(node, w.scope);
  // The VMs run on the world's node, the dongle is on the fixture node: imported over USB/IP, so the
  // VMs' node advertises its vhci ports as the DRA daemon's gateway would (4 per hub, none used).
  await setPorts(0);
  device = usbDeviceName(dongle, node.name);
  const nodeDevices = kube.resource(descriptorOf(nodeUSBDevice), NodeUSBDeviceSchema, TEST_MANAGER);
  await waitFor('the NodeUSBDevice', () => nodeDevices.get({ name: device }).catch(() => undefined));
  await nodeDevices.mergePatch({ name: device }, { spec: { assignedNamespace: w.ns } });
  const templates = kube.resource(resourceClaimTemplateDescriptor, ResourceClaimTemplateSchema, TEST_MANAGER);
  await waitFor('the claim template', () => templates.get({ namespace: w.ns, name: `${device}-template` }).catch(() => undefined));
});

afterAll(async () => {
  await w?.stop();
  await daemon?.stop();
  await node?.cleanup();
  kube?.close();
});

describe("a running VM's spec.usbDevices", () => {
  it('reserves the device with a claim from its template, sends addresourceclaim and reports it attached', async () => {
    await w.createVM('reader', { usbDevices: [{ name: device }] });
    const vm = await w.vmWhen('reader', (v) => v.status?.usbDevices?.[0]?.attached === true && usbCondition(v)?.status === 'True', 'USB attached');
    expect(vm.status?.phase).toBe('Running');
    expect(vm.status?.usbDevices).toEqual([{ name: device, attached: true, ready: true, address: { bus: 0, port: 1 }, hotplugged: true }]);
    expect(usbCondition(vm)).toMatchObject({ reason: 'USBDeviceReady', message: 'All USB devices are ready' });
    expect(fake.calls.filter((x) => x.vm === 'reader')).toEqual([
      { op: 'add', namespace: w.ns, vm: 'reader', name: device, resourceClaimTemplateName: `${device}-template`, requestName: `req-${device}` },
    ]);
    const claim = await claims().get({ namespace: w.ns, name: `${device}-claim` });
    expect(claim.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'VirtualMachine', name: 'reader', uid: vm.metadata.uid, controller: true });
    expect(claim.metadata.labels?.['virtualization.deckhouse.io/usb-device']).toBe(device);
    expect(claim.metadata.annotations?.['usb.virtualization.deckhouse.io/device-user']).toBe('64535');
    expect((claim.spec as { devices?: { requests?: { name: string }[] } }).devices?.requests?.[0]?.name).toBe(`req-${device}`);
    // Hot-plugged: no restart is awaited for it.
    expect(vm.status?.restartAwaitingChanges ?? []).toEqual([]);
    const usbDevices = kube.resource(descriptorOf(usbDevice), USBDeviceSchema, TEST_MANAGER);
    await waitFor('the USBDevice Attached', async () => {
      const u = await usbDevices.get({ namespace: w.ns, name: device });
      const a = u.status?.conditions?.find((x) => x.type === 'Attached');
      return a?.status === 'True' && a.reason === 'AttachedToVirtualMachine' && a.message === `Device is attached to VirtualMachine ${w.ns}/reader.`;
    });
  });

  it('refuses the device to a second VM while the first holds it, with the holder named', async () => {
    await w.createVM('second', { usbDevices: [{ name: device }] });
    const vm = await w.vmWhen('second', (v) => usbCondition(v)?.status === 'False', 'USBDeviceReady False');
    expect(usbCondition(vm)).toMatchObject({ reason: 'SomeDevicesNotReady', message: `USB device '${device}' is in use by VirtualMachine ${w.ns}/reader` });
    expect(vm.status?.usbDevices).toEqual([{ name: device, attached: false, ready: true }]);
    expect(fake.calls.filter((x) => x.vm === 'second')).toEqual([]);
  });

  it('names an unknown device and one that is not ready, and attaches nothing', async () => {
    // A USBDevice without a NodeUSBDevice behind it: Ready=False/NotFound.
    const usbDevices = kube.resource(descriptorOf(usbDevice), USBDeviceSchema, TEST_MANAGER);
    await usbDevices.create({ apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'USBDevice', metadata: { namespace: w.ns, name: 'usb-ghost' } });
    await w.createVM('lost', { usbDevices: [{ name: 'usb-nowhere' }, { name: 'usb-ghost' }] });
    const vm = await w.vmWhen(
      'lost',
      (v) => v.status?.phase === 'Running' && (usbCondition(v)?.message ?? '').includes('usb-ghost'),
      'running, both devices reported',
    );
    expect(usbCondition(vm)).toMatchObject({
      status: 'False',
      reason: 'SomeDevicesNotReady',
      message: `USB device 'usb-nowhere' not found in namespace ${w.ns}; USB device 'usb-ghost' is not ready: The USB device is no longer present on its node.`,
    });
    expect(vm.status?.usbDevices).toEqual([
      { name: 'usb-nowhere', attached: false, ready: false },
      { name: 'usb-ghost', attached: false, ready: false },
    ]);
    expect(fake.calls.filter((x) => x.vm === 'lost')).toEqual([]);
  });

  it('detaches and releases the device when the entry goes away; the waiting VM gets it, after a virt-api failure', async () => {
    const reader = await c.vms.get({ namespace: w.ns, name: 'reader' });
    fake.failNext(1);
    await c.vms.mergePatch({ namespace: w.ns, name: 'reader' }, { spec: { usbDevices: [] } });
    await w.vmWhen('reader', (v) => v.status?.usbDevices === undefined && usbCondition(v) === undefined, 'USB status gone');
    // The first removeresourceclaim failed (500): it was sent again.
    expect(fake.calls.filter((x) => x.vm === 'reader' && x.op === 'remove').length).toBeGreaterThanOrEqual(2);
    const second = await w.vmWhen('second', (v) => v.status?.usbDevices?.[0]?.attached === true, 'the second VM attached');
    expect(usbCondition(second)?.status).toBe('True');
    const claim = await claims().get({ namespace: w.ns, name: `${device}-claim` });
    expect(claim.metadata.ownerReferences?.[0]?.name).toBe('second');
    expect(claim.metadata.ownerReferences?.[0]?.uid).not.toBe(reader.metadata.uid);
  });

  it('releases the claim when the VM holding it is deleted, and the other VM then gets the device', async () => {
    await c.vms.delete({ namespace: w.ns, name: 'second' });
    await waitFor('the VM gone', () => gone(() => c.vms.get({ namespace: w.ns, name: 'second' })));
    await waitFor('the claim released', () => gone(() => claims().get({ namespace: w.ns, name: `${device}-claim` })));
    // `reader` no longer names it; `lost` gets it once named.
    await c.vms.mergePatch({ namespace: w.ns, name: 'lost' }, { spec: { usbDevices: [{ name: device }] } });
    const lost = await w.vmWhen('lost', (v) => v.status?.usbDevices?.[0]?.attached === true, 'the third VM attached');
    expect(usbCondition(lost)?.status).toBe('True');
    expect(lost.status?.phase).toBe('Running');
  });

  it('waits for a free USB/IP port on the VM node, naming it, and attaches once one is free, after a virt-api failure', async () => {
    await c.vms.mergePatch({ namespace: w.ns, name: 'lost' }, { spec: { usbDevices: [] } });
    await waitFor('the claim released', () => gone(() => claims().get({ namespace: w.ns, name: `${device}-claim` })));
    await setPorts(4);
    await w.createVM('blocked', { usbDevices: [{ name: device }] });
    const vm = await w.vmWhen('blocked', (v) => v.status?.phase === 'Running' && usbCondition(v)?.status === 'False', 'waiting for a port');
    expect(usbCondition(vm)).toMatchObject({
      reason: 'SomeDevicesNotReady',
      message: `USB device '${device}' cannot be attached: no free USB/IP port on node ${w.nodeName}`,
    });
    expect(fake.calls.filter((x) => x.vm === 'blocked')).toEqual([]);
    const usbDevices = kube.resource(descriptorOf(usbDevice), USBDeviceSchema, TEST_MANAGER);
    await waitFor('the USBDevice NoFreeUSBIPPort', async () => {
      const a = (await usbDevices.get({ namespace: w.ns, name: device })).status?.conditions?.find((x) => x.type === 'Attached');
      return (
        a?.reason === 'NoFreeUSBIPPort' &&
        a.message === `Device is requested by VirtualMachine ${w.ns}/blocked, but node ${w.nodeName} has no free USB/IP port.`
      );
    });
    // A port frees; the first addresourceclaim fails (the condition names it meanwhile): sent again.
    fake.failNext(1);
    await setPorts(3);
    await w.vmWhen('blocked', (v) => v.status?.usbDevices?.[0]?.attached === true, 'attached once a port is free');
    expect(fake.calls.filter((x) => x.vm === 'blocked' && x.op === 'add')).toHaveLength(2);
  });
});
