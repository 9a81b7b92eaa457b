import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { usbDeviceName } from '../../../daemons/dra/devices.js';
import { fixtureDeviceDir, removeFixtureDevice, writeFixtureSysfs, type FixtureDevice } from '../../../daemons/dra/discovery/index.js';
import { resourceSliceDescriptor, ResourceSliceSchema } from '../../../shared/api/k8s/resource.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { kubectl } from '../../env/index.js';
import { devicesOf, fixtureNode, slicesOf, startDaemon, TEST_MANAGER, type FixtureNode, type RunningDaemon } from './harness.js';

const dongle: FixtureDevice = { busId: '1-1', devNum: 2, vendorId: '0529', productId: '0001', manufacturer: 'AKS', product: 'HASP HL 3.25', serial: 'HASP-01' };
const reader: FixtureDevice = { busId: '1-2.3', devNum: 5, vendorId: '076b', productId: '3021', speed: '12', product: 'CardMan 3021' };
const hub: FixtureDevice = { busId: '1-2', devNum: 3, vendorId: '05e3', productId: '0608', deviceClass: '09' };
const broken: FixtureDevice = { busId: '2-1', devNum: 4, vendorId: '10c4', productId: 'ea60', files: { idProduct: 'garbage\n' } };
const serial: FixtureDevice = {
  busId: '2-4',
  devNum: 9,
  vendorId: '0403',
  productId: '6001',
  speed: '12',
  manufacturer: 'FTDI',
  product: 'FT232R USB UART',
  serial: 'A50285BI',
};

let node: FixtureNode;
let daemon: RunningDaemon;

beforeAll(async () => {
  node = await fixtureNode('dra-slices');
  await writeFixtureSysfs(node.sysRoot, [dongle, hub, reader, broken]);
  daemon = startDaemon(node, { RESYNC_INTERVAL: '1s' });
  await daemon.handle.started;
});

afterAll(async () => {
  await daemon?.stop();
  await node?.cleanup();
});

describe('ResourceSlices of a fixture node on the real apiserver', () => {
  it('the apiserver serves resource.k8s.io/v1 ResourceSlices', async () => {
    const res = await kubectl(['api-resources', '--api-group=resource.k8s.io', '-o', 'name']);
    expect(res.stdout.split('\n')).toContain('resourceslices.resource.k8s.io');
    const versions = await kubectl(['api-versions']);
    expect(versions.stdout.split('\n')).toContain('resource.k8s.io/v1');
  });

  it('publishes one device per USB device with the original attributes, hub and broken entry left out', async () => {
    const slices = await waitFor('the slice with two devices', async () => {
      const s = await slicesOf(node.kube, node.name);
      return devicesOf(s).size === 2 && s;
    });
    expect(slices).toHaveLength(1);
    const [slice] = slices;
    expect(slice?.spec).toMatchObject({ driver: 'virtualization-usb', nodeName: node.name, pool: { name: node.name, resourceSliceCount: 1 } });
    expect(slice?.metadata.ownerReferences).toEqual([expect.objectContaining({ apiVersion: 'v1', kind: 'Node', name: node.name, controller: true })]);
    const devices = devicesOf(slices);
    const dongleName = usbDeviceName(dongle, node.name);
    expect(devices.get(dongleName)).toEqual({
      name: { string: dongleName },
      path: { string: join(node.sysRoot, 'bus/usb/devices/1-1') },
      busID: { string: '1-1' },
      vendorID: { string: '0529' },
      productID: { string: '0001' },
      bcd: { string: '0100' },
      bus: { string: '001' },
      deviceNumber: { string: '002' },
      speed: { int: 480 },
      devicePath: { string: '/dev/bus/usb/001/002' },
      usbAddress: { string: '001:002' },
      manufacturer: { string: 'AKS' },
      product: { string: 'HASP HL 3.25' },
      serial: { string: 'HASP-01' },
      major: { int: 189 },
      minor: { int: 1 },
    });
    expect(devices.get(usbDeviceName(reader, node.name))).toMatchObject({ busID: { string: '1-2.3' }, speed: { int: 12 } });
    expect(devices.get(usbDeviceName(reader, node.name))).not.toHaveProperty('serial');
  });

  it('adds a plugged device and removes an unplugged one, with a new pool generation each time', async () => {
    const before = (await slicesOf(node.kube, node.name))[0]?.spec.pool.generation ?? 0;
    await writeFixtureSysfs(node.sysRoot, [serial]);
    const plugged = await waitFor('the plugged device in the slice', async () => {
      const s = await slicesOf(node.kube, node.name);
      return devicesOf(s).has(usbDeviceName(serial, node.name)) && s;
    });
    const afterPlug = plugged[0]?.spec.pool.generation ?? 0;
    expect(afterPlug).toBeGreaterThan(before);
    expect(devicesOf(plugged).size).toBe(3);

    await removeFixtureDevice(node.sysRoot, dongle);
    const unplugged = await waitFor('the unplugged device gone from the slice', async () => {
      const s = await slicesOf(node.kube, node.name);
      return !devicesOf(s).has(usbDeviceName(dongle, node.name)) && s;
    });
    expect(unplugged[0]?.spec.pool.generation).toBeGreaterThan(afterPlug);
    expect([...devicesOf(unplugged).keys()].sort()).toEqual([usbDeviceName(reader, node.name), usbDeviceName(serial, node.name)].sort());
  });

  it('publishes a device once its broken entry is repaired', async () => {
    await writeFile(join(fixtureDeviceDir(node.sysRoot, broken), 'idProduct'), 'ea60\n');
    await waitFor('the repaired device in the slice', async () =>
      devicesOf(await slicesOf(node.kube, node.name)).has(usbDeviceName({ ...broken, productId: 'ea60' }, node.name)),
    );
  });

  it('puts back a slice someone deleted, at the next resync', async () => {
    const [slice] = await slicesOf(node.kube, node.name);
    const client = node.kube.resource(resourceSliceDescriptor, ResourceSliceSchema, TEST_MANAGER);
    await client.delete({ name: slice?.metadata.name ?? '' });
    const back = await waitFor('the slice re-created', async () => {
      const s = await slicesOf(node.kube, node.name);
      return s.length === 1 && s[0]?.metadata.uid !== slice?.metadata.uid && s;
    });
    // The same devices; the generation is not older (a rescan still settling from the previous test may
    // have moved it on meanwhile, which is what a busy machine shows).
    expect([...devicesOf(back).keys()].sort()).toEqual([...devicesOf(slice === undefined ? [] : [slice]).keys()].sort());
    expect(back[0]?.spec.pool.generation).toBeGreaterThanOrEqual(slice?.spec.pool.generation ?? 0);
  });

  it('serves health and metrics', async () => {
    const port = (await daemon.handle.health).port;
    const ready = await fetch(`http://127.0.0.1:${port}/health/readiness`);
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^d8_virtualization_dra_devices 3$/m);
    expect(metrics).toMatch(/^d8_virtualization_dra_pool_generation \d+$/m);
  });

  it('removes the slices on shutdown', async () => {
    await daemon.stop();
    expect(await slicesOf(node.kube, node.name)).toEqual([]);
  });
});
