/**
 * The whole USB object flow on the real apiserver: the DRA daemon publishes a fixture node's devices,
 * the controller's USB reconcilers make NodeUSBDevices from the slice, a namespace assigned makes the
 * USBDevice and its ResourceClaimTemplate, and unplugging turns them NotFound and cleans up.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { usbDeviceName } from '../../../daemons/dra/devices.js';
import { removeFixtureDevice, writeFixtureSysfs, type FixtureDevice } from '../../../daemons/dra/discovery/index.js';
import { NodeUSBDeviceSchema, USBDeviceSchema, nodeUSBDevice, usbDevice, type NodeUSBDevice } from '../../../shared/api/resources/usb.js';
import { ResourceClaimTemplateSchema, resourceClaimTemplateDescriptor } from '../../../shared/api/k8s/resource.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import { descriptorOf } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace } from '../../env/index.js';
import { writesTo } from '../controller/audit.js';
import { newScope, type Scope } from '../controller/fixtures.js';
import { fixtureNode, startUsbFlow, TEST_MANAGER, type FixtureNode, type UsbFlow } from './harness.js';

const dongle: FixtureDevice = { busId: '3-1', devNum: 4, vendorId: '0529', productId: '0001', manufacturer: 'AKS', product: 'HASP HL', serial: 'H-9' };
const adapter: FixtureDevice = { busId: '3-2', devNum: 5, vendorId: '0403', productId: '6001', speed: '12' };

let node: FixtureNode;
let flow: UsbFlow;
let scope: Scope;

const condition = (
  obj: { status?: { conditions?: { type: string; status: string; reason: string }[] | undefined } | undefined } | undefined,
  type: string,
): string | undefined => {
  const c = obj?.status?.conditions?.find((x) => x.type === type);
  return c === undefined ? undefined : `${c.status}/${c.reason}`;
};

beforeAll(async () => {
  node = await fixtureNode('dra-ctl');
  await writeFixtureSysfs(node.sysRoot, [dongle, adapter]);
  scope = newScope(await freshNamespace('dra-usb'));
  flow = await startUsbFlow(node, scope);
});

afterAll(async () => {
  await flow?.stop();
  await node?.cleanup();
});

describe("the controller's USB reconcilers on the DRA daemon's slices", () => {
  const nodeDevices = (): ReturnType<typeof node.kube.resource<NodeUSBDevice>> =>
    node.kube.resource(descriptorOf(nodeUSBDevice), NodeUSBDeviceSchema, TEST_MANAGER);
  const get = async (name: string): Promise<NodeUSBDevice | undefined> =>
    nodeDevices()
      .get({ name })
      .catch((err: unknown) => {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      });

  it("creates a ready NodeUSBDevice per device with the slice's attributes, owned by the slice", async () => {
    const name = usbDeviceName(dongle, node.name);
    const nusb = await waitFor('the NodeUSBDevice ready', async () => {
      const n = await get(name);
      return condition(n, 'Ready') === 'True/Ready' && n;
    });
    expect(nusb.spec.assignedNamespace).toBe('');
    expect(nusb.status?.nodeName).toBe(node.name);
    expect(nusb.status?.attributes).toEqual({
      name,
      nodeName: node.name,
      manufacturer: 'AKS',
      product: 'HASP HL',
      serial: 'H-9',
      vendorID: '0529',
      productID: '0001',
      bcd: '0100',
      bus: '003',
      deviceNumber: '004',
      devicePath: '/dev/bus/usb/003/004',
      major: 189,
      minor: 259,
      speed: 480,
    });
    expect(nusb.metadata.ownerReferences?.[0]).toMatchObject({ apiVersion: 'resource.k8s.io/v1', kind: 'ResourceSlice' });
    expect(nusb.metadata.finalizers).toContain('virtualization.deckhouse.io/nodeusbdevice-cleanup');
    // Created with its finalizer: the object itself was written once (its status apart).
    const writes = (await writesTo('nodeusbdevices', name)).filter((e) => e.objectRef?.subresource === undefined);
    expect(writes.map((e) => e.verb)).toEqual(['create']);
    expect(condition(nusb, 'Assigned')).toBe('False/Available');
    expect(await get(usbDeviceName(adapter, node.name))).toBeDefined();
  });

  it('assigning a namespace creates the USBDevice there and its ResourceClaimTemplate', async () => {
    const ns = scope.namespace;
    const name = usbDeviceName(dongle, node.name);
    await nodeDevices().mergePatch({ name }, { spec: { assignedNamespace: ns } });
    const assigned = await waitFor('Assigned', async () => {
      const n = await get(name);
      return condition(n, 'Assigned') === 'True/Assigned' && n;
    });
    expect(assigned.status?.conditions?.find((c) => c.type === 'Assigned')?.message).toBe(
      `The device is assigned to namespace "${ns}", and the corresponding USBDevice has been created.`,
    );
    const usbDevices = node.kube.resource(descriptorOf(usbDevice), USBDeviceSchema, TEST_MANAGER);
    const device = await waitFor('the USBDevice ready', async () => {
      const u = await usbDevices.get({ namespace: ns, name }).catch(() => undefined);
      return condition(u, 'Ready') === 'True/Ready' && u;
    });
    expect(device.status?.attributes?.serial).toBe('H-9');
    expect(device.metadata.finalizers).toEqual(['virtualization.deckhouse.io/usbdevice-cleanup']);
    const deviceWrites = (await writesTo('usbdevices', name, ns)).filter((e) => e.objectRef?.subresource === undefined);
    expect(deviceWrites.map((e) => e.verb)).toEqual(['create']);
    expect(condition(device, 'Attached')).toBe('False/Available');
    const templates = node.kube.resource(resourceClaimTemplateDescriptor, ResourceClaimTemplateSchema, TEST_MANAGER);
    const template = await waitFor('the claim template', () => templates.get({ namespace: ns, name: `${name}-template` }).catch(() => undefined));
    expect(template.spec.spec.devices?.requests?.[0]).toEqual({
      name: `req-${name}`,
      exactly: {
        deviceClassName: 'usb-devices.virtualization.deckhouse.io',
        allocationMode: 'ExactCount',
        count: 1,
        selectors: [{ cel: { expression: `device.attributes["virtualization-usb"].name == "${name}"` } }],
      },
    });
    expect(template.spec.metadata?.annotations).toEqual({
      'usb.virtualization.deckhouse.io/device-group': '64535',
      'usb.virtualization.deckhouse.io/device-user': '64535',
    });

    // Unplugged: NotFound, the USBDevice goes.
    await removeFixtureDevice(node.sysRoot, dongle);
    await waitFor('Ready NotFound and the USBDevice removed', async () => {
      const n = await get(name);
      const gone = await usbDevices.get({ namespace: ns, name }).then(
        () => false,
        (err: unknown) => err instanceof NotFoundError,
      );
      return condition(n, 'Ready') === 'False/NotFound' && condition(n, 'Assigned') === 'False/InProgress' && gone;
    });
  });

  it('deletes an unplugged device that is assigned to no namespace', async () => {
    const name = usbDeviceName(adapter, node.name);
    await removeFixtureDevice(node.sysRoot, adapter);
    await waitFor('the NodeUSBDevice deleted', async () => (await get(name)) === undefined);
  });
});
