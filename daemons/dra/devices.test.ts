import { describe, expect, it } from '@jest/globals';
import { buildSlices, MAX_DEVICES_PER_SLICE, poolFingerprint, sliceDevice, sliceName, usbDeviceName } from './devices.js';
import type { UsbDeviceInfo } from './discovery/index.js';

const info: UsbDeviceInfo = {
  busId: '3-2.1',
  sysPath: '/sys/bus/usb/devices/3-2.1',
  realPath: '/sys/devices/pci0000:00/0000:00:14.0/usb3/3-2/3-2.1',
  busNum: 3,
  devNum: 5,
  vendorId: '0403',
  productId: '6001',
  bcdDevice: '0600',
  speed: '1.5',
  deviceClass: '00',
  deviceSubClass: '00',
  deviceProtocol: '00',
  configurationValue: 1,
  numConfigurations: 1,
  numInterfaces: 1,
  interfaces: [],
  product: 'x'.repeat(80),
  devicePath: '/dev/bus/usb/003/005',
  major: 189,
  minor: 260,
  viaVhci: false,
};

describe('device names and attributes', () => {
  it('names a device by port, model and node, as the original does (sha1 of busId-vendor-product-node)', () => {
    // sha1("3-2.1-0403-6001-node-a")
    expect(usbDeviceName(info, 'node-a')).toBe('usb-e4e69dcd75eaef8065dac252518a2c0715afccf1');
    expect(usbDeviceName(info, 'node-b')).not.toBe(usbDeviceName(info, 'node-a'));
  });

  it('publishes low speed as 1 Mbps and cuts strings to the API limit of 64 characters', () => {
    const d = sliceDevice(info, 'node-a');
    expect(d.attributes?.speed).toEqual({ int: 1 });
    expect(d.attributes?.product?.string).toHaveLength(64);
    expect(d.attributes?.usbAddress).toEqual({ string: '003:005' });
    expect(d.attributes).not.toHaveProperty('serial');
  });
});

describe('buildSlices', () => {
  const devices = Array.from({ length: 300 }, (_, i) => ({ name: `usb-${String(i).padStart(3, '0')}` }));

  it('splits a pool into slices of at most 128 devices that all carry the generation and the count', () => {
    const slices = buildSlices({ driver: 'virtualization-usb', nodeName: 'n1', generation: 7, devices });
    expect(slices.map((s) => s.spec.devices?.length)).toEqual([MAX_DEVICES_PER_SLICE, MAX_DEVICES_PER_SLICE, 44]);
    expect(slices.map((s) => s.metadata.name)).toEqual(['n1-virtualization-usb-0', 'n1-virtualization-usb-1', 'n1-virtualization-usb-2']);
    for (const s of slices) expect(s.spec.pool).toEqual({ name: 'n1', generation: 7, resourceSliceCount: 3 });
  });

  it('publishes one empty slice when the node has no device', () => {
    const slices = buildSlices({ driver: 'd', nodeName: 'n1', generation: 1, devices: [] });
    expect(slices).toHaveLength(1);
    expect(slices[0]?.spec.devices).toEqual([]);
  });

  it('keeps slice names within the API limit for very long node names', () => {
    const name = sliceName('virtualization-usb', 'n'.repeat(253), 0);
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name).not.toBe(sliceName('virtualization-usb', `${'n'.repeat(252)}m`, 0));
  });

  it('fingerprints the content independent of order', () => {
    expect(poolFingerprint([{ name: 'b' }, { name: 'a' }])).toBe(poolFingerprint([{ name: 'a' }, { name: 'b' }]));
  });
});
