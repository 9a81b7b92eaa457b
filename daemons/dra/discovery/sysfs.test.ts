import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareBusIds, parseUevent, scanUsbDevices, writeFixtureSysfs, type FixtureDevice } from './sysfs.js';
import { removeFixtureDevice } from './index.js';

const token: FixtureDevice = {
  busId: '5-1',
  devNum: 2,
  vendorId: '0951',
  productId: '1666',
  bcdDevice: '0110',
  speed: '480',
  manufacturer: 'Kingston',
  product: 'DataTraveler 3.0',
  serial: '60A44C413E4AE36059A2004B',
  interfaces: [{ class: '08', subClass: '06', protocol: '50' }],
};
const hub: FixtureDevice = { busId: '3-2', devNum: 2, vendorId: '05e3', productId: '0610', deviceClass: '09', product: 'USB2.0 Hub' };
const behindHub: FixtureDevice = {
  busId: '3-2.1',
  devNum: 5,
  vendorId: '0403',
  productId: '6001',
  speed: '12',
  manufacturer: 'FTDI',
  product: 'FT232R USB UART',
  serial: 'A50285BI',
};
const deepNoStrings: FixtureDevice = { busId: '3-2.1.4', devNum: 7, vendorId: '046D', productId: 'C52B', speed: '1.5' };

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'dra-sysfs-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('scanUsbDevices', () => {
  it('reads every device with its attributes and interfaces, ignoring root hubs and hubs', async () => {
    await writeFixtureSysfs(root, [token, hub, behindHub, deepNoStrings]);
    const scan = await scanUsbDevices(root);
    expect(scan.skipped).toEqual([]);
    expect(scan.ignored).toEqual([{ path: join(root, 'bus/usb/devices/3-2'), reason: 'hub (class 09), not passed through' }]);
    expect(scan.devices.map((d) => d.busId)).toEqual(['3-2.1', '3-2.1.4', '5-1']);
    const t = scan.devices[2];
    expect(t).toEqual({
      busId: '5-1',
      sysPath: join(root, 'bus/usb/devices/5-1'),
      realPath: join(root, 'devices/pci0000:00/0000:00:05.0/usb5/5-1'),
      busNum: 5,
      devNum: 2,
      vendorId: '0951',
      productId: '1666',
      bcdDevice: '0110',
      speed: '480',
      deviceClass: '00',
      deviceSubClass: '00',
      deviceProtocol: '00',
      configurationValue: 1,
      numConfigurations: 1,
      numInterfaces: 1,
      interfaces: [{ class: '08', subClass: '06', protocol: '50' }],
      manufacturer: 'Kingston',
      product: 'DataTraveler 3.0',
      serial: '60A44C413E4AE36059A2004B',
      devicePath: '/dev/bus/usb/005/002',
      major: 189,
      minor: 513,
      driver: 'usb',
      viaVhci: false,
    });
  });

  it('keeps devices without string descriptors and lowercases hex ids', async () => {
    await writeFixtureSysfs(root, [deepNoStrings]);
    const [d] = (await scanUsbDevices(root)).devices;
    expect(d).toMatchObject({ busId: '3-2.1.4', vendorId: '046d', productId: 'c52b', speed: '1.5', devicePath: '/dev/bus/usb/003/007', minor: 262 });
    expect(d).not.toHaveProperty('serial');
    expect(d).not.toHaveProperty('manufacturer');
    expect(d?.realPath).toBe(join(root, 'devices/pci0000:00/0000:00:03.0/usb3/3-2/3-2.1/3-2.1.4'));
  });

  it.each([
    ['a missing idVendor', { idVendor: null }, 'idVendor: missing'],
    ['a garbage idProduct', { idProduct: 'zz!?\n' }, 'idProduct: "zz!?" is not 4 hex digits'],
    ['an empty busnum', { busnum: '\n' }, 'busnum: empty'],
    ['a zero devnum', { devnum: '0\n' }, 'devnum: "0" is not a positive number'],
    ['a garbage speed', { speed: 'fast\n' }, 'speed: "fast" is not a speed'],
    ['a garbage bNumInterfaces', { bNumInterfaces: 'x\n' }, 'bNumInterfaces: "x" is not a number'],
    ['a garbage MINOR in uevent', { uevent: 'MAJOR=189\nMINOR=abc\n' }, 'MINOR: "abc" is not a number'],
    ['a huge serial', { serial: 'x'.repeat(10_000) }, 'serial: longer than a sysfs page'],
    ['a vendor id of zero', { idVendor: '0000\n' }, 'idVendor: 0000 is not a device'],
  ])('skips a device with %s and names the problem, others still found', async (_, files, reason) => {
    await writeFixtureSysfs(root, [token, { ...behindHub, files }]);
    const scan = await scanUsbDevices(root);
    expect(scan.devices.map((d) => d.busId)).toEqual(['5-1']);
    expect(scan.skipped).toEqual([{ path: join(root, 'bus/usb/devices/3-2.1'), reason }]);
  });

  it('skips a dangling symlink and an entry with only a uevent file', async () => {
    await writeFixtureSysfs(root, [token]);
    await symlink('../../../devices/gone/4-1', join(root, 'bus/usb/devices/4-1'));
    await mkdir(join(root, 'bus/usb/devices/6-3'));
    await writeFile(join(root, 'bus/usb/devices/6-3/uevent'), 'DEVTYPE=usb_device\n');
    const scan = await scanUsbDevices(root);
    expect(scan.devices.map((d) => d.busId)).toEqual(['5-1']);
    expect(scan.skipped.map((s) => s.path)).toEqual([join(root, 'bus/usb/devices/4-1'), join(root, 'bus/usb/devices/6-3')]);
    expect(scan.skipped[0]?.reason).toMatch(/ENOENT/);
    expect(scan.skipped[1]?.reason).toBe('idVendor: missing');
  });

  it('accepts an unconfigured device (bound to usbip-host) with empty configuration files', async () => {
    await writeFixtureSysfs(root, [{ ...token, driver: 'usbip-host', files: { bConfigurationValue: '\n', bNumInterfaces: '\n' } }]);
    const [d] = (await scanUsbDevices(root)).devices;
    expect(d).toMatchObject({ configurationValue: 0, numInterfaces: 0, interfaces: [], driver: 'usbip-host' });
  });

  it('marks a device behind vhci_hcd', async () => {
    await writeFixtureSysfs(root, [{ ...token, busId: '9-1', viaVhci: true }]);
    const [d] = (await scanUsbDevices(root)).devices;
    expect(d?.viaVhci).toBe(true);
  });

  it('returns nothing for a root without a USB bus', async () => {
    expect(await scanUsbDevices(join(root, 'nothing'))).toEqual({ devices: [], skipped: [], ignored: [] });
  });

  it('sees a device unplugged', async () => {
    await writeFixtureSysfs(root, [token, behindHub]);
    await removeFixtureDevice(root, behindHub);
    expect((await scanUsbDevices(root)).devices.map((d) => d.busId)).toEqual(['5-1']);
  });
});

describe('helpers', () => {
  it('orders bus ids numerically, parents before children', () => {
    expect(['3-10', '3-2.1', '1-1', '3-2'].sort(compareBusIds)).toEqual(['1-1', '3-2', '3-2.1', '3-10']);
  });

  it('parses uevent lines and ignores lines without a key', () => {
    expect([...parseUevent('MAJOR=189\n=x\nnoequals\nDEVNAME=bus/usb/001/002\n')]).toEqual([
      ['MAJOR', '189'],
      ['DEVNAME', 'bus/usb/001/002'],
    ]);
  });
});
