/**
 * Test and simulation helper: writes a sysfs tree shaped like the kernel's under a root. Devices live
 * in `<root>/devices/pci0000:00/0000:00:14.0/usb<bus>/<busId>` (nested under their parent hub port),
 * with a symlink `<root>/bus/usb/devices/<busId>` for every device, interface and root hub. Used by
 * the unit tests, the integration tests, the benchmark and the simulated node of `npm start`.
 */
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';

export interface FixtureInterface {
  class: string;
  subClass?: string;
  protocol?: string;
}

export interface FixtureDevice {
  busId: string;
  /** Defaults to the number before the dash of busId. */
  busNum?: number;
  devNum: number;
  vendorId: string;
  productId: string;
  bcdDevice?: string;
  speed?: string;
  deviceClass?: string;
  manufacturer?: string;
  product?: string;
  serial?: string;
  driver?: string;
  interfaces?: FixtureInterface[];
  /** Put the device under a vhci_hcd controller (imported over USB/IP). */
  viaVhci?: boolean;
  /** Replace (string) or delete (null) any file of the device dir, to make broken entries. */
  files?: Record<string, string | null>;
}

/** The dir of the controller a bus hangs off. */
function controllerDir(root: string, busNum: number, viaVhci: boolean): string {
  return viaVhci
    ? join(root, 'devices', 'platform', 'vhci_hcd.0', `usb${busNum}`)
    : join(root, 'devices', 'pci0000:00', `0000:00:${String(busNum).padStart(2, '0')}.0`, `usb${busNum}`);
}

/** The real dir of a device: nested under its parent port (`3-2.1` under `3-2`). */
export function fixtureDeviceDir(root: string, d: FixtureDevice): string {
  const busNum = d.busNum ?? Number(d.busId.split('-')[0]);
  const [bus, ports] = d.busId.split('-') as [string, string];
  const parts = ports.split('.');
  let dir = controllerDir(root, busNum, d.viaVhci === true);
  for (let i = 1; i <= parts.length; i++) dir = join(dir, `${bus}-${parts.slice(0, i).join('.')}`);
  return dir;
}

async function link(root: string, target: string, name: string): Promise<void> {
  const at = join(root, 'bus', 'usb', 'devices', name);
  await rm(at, { force: true });
  await symlink(relative(dirname(at), target), at);
}

async function writeFiles(dir: string, files: Record<string, string | null>): Promise<void> {
  await mkdir(dir, { recursive: true });
  await Promise.all(
    Object.entries(files).map(async ([name, text]) => (text === null ? rm(join(dir, name), { force: true }) : writeFile(join(dir, name), text))),
  );
}

/** The files the kernel shows for a device, before the `files` overrides. */
export function fixtureFiles(d: FixtureDevice): Record<string, string> {
  const busNum = d.busNum ?? Number(d.busId.split('-')[0]);
  const minor = (busNum - 1) * 128 + (d.devNum - 1);
  const cls = d.deviceClass ?? '00';
  const devName = `bus/usb/${String(busNum).padStart(3, '0')}/${String(d.devNum).padStart(3, '0')}`;
  const files: Record<string, string> = {
    uevent:
      `MAJOR=189\nMINOR=${minor}\nDEVNAME=${devName}\nDEVTYPE=usb_device\nDRIVER=${d.driver ?? 'usb'}\n` +
      `PRODUCT=${parseInt(d.vendorId, 16).toString(16)}/${parseInt(d.productId, 16).toString(16)}/` +
      `${parseInt(d.bcdDevice ?? '0100', 16).toString(16)}\nTYPE=${parseInt(cls, 16)}/0/0\n` +
      `BUSNUM=${String(busNum).padStart(3, '0')}\nDEVNUM=${String(d.devNum).padStart(3, '0')}\n`,
    dev: `189:${minor}\n`,
    idVendor: `${d.vendorId}\n`,
    idProduct: `${d.productId}\n`,
    bcdDevice: `${d.bcdDevice ?? '0100'}\n`,
    busnum: `${busNum}\n`,
    devnum: `${d.devNum}\n`,
    speed: `${d.speed ?? '480'}\n`,
    bDeviceClass: `${cls}\n`,
    bDeviceSubClass: '00\n',
    bDeviceProtocol: cls === '09' ? '01\n' : '00\n',
    bConfigurationValue: '1\n',
    bNumConfigurations: '1\n',
    bNumInterfaces: `${String((d.interfaces ?? [{ class: cls === '09' ? '09' : 'ff' }]).length).padStart(2, ' ')}\n`,
    version: ' 2.00\n',
  };
  if (d.manufacturer !== undefined) files.manufacturer = `${d.manufacturer}\n`;
  if (d.product !== undefined) files.product = `${d.product}\n`;
  if (d.serial !== undefined) files.serial = `${d.serial}\n`;
  return files;
}

/** Writes (or overwrites) the devices, their interfaces and the root hubs of their buses under `root`. */
export async function writeFixtureSysfs(root: string, devices: FixtureDevice[]): Promise<void> {
  await mkdir(join(root, 'bus', 'usb', 'devices'), { recursive: true });
  const buses = new Map<number, boolean>();
  for (const d of devices) buses.set(d.busNum ?? Number(d.busId.split('-')[0]), d.viaVhci === true);
  for (const [busNum, vhci] of buses) {
    const dir = controllerDir(root, busNum, vhci);
    await writeFiles(dir, {
      idVendor: '1d6b\n',
      idProduct: '0002\n',
      busnum: `${busNum}\n`,
      devnum: '1\n',
      speed: '480\n',
      bDeviceClass: '09\n',
      uevent: `DEVTYPE=usb_device\nTYPE=9/0/1\nBUSNUM=${String(busNum).padStart(3, '0')}\n`,
    });
    await link(root, dir, `usb${busNum}`);
  }
  for (const d of devices) {
    const dir = fixtureDeviceDir(root, d);
    await writeFiles(dir, { ...fixtureFiles(d), ...(d.files ?? {}) });
    const ifs = d.interfaces ?? [{ class: d.deviceClass === '09' ? '09' : 'ff' }];
    for (const [n, i] of ifs.entries()) {
      const ifName = `${d.busId}:1.${n}`;
      await writeFiles(join(dir, ifName), {
        bInterfaceClass: `${i.class}\n`,
        bInterfaceSubClass: `${i.subClass ?? '00'}\n`,
        bInterfaceProtocol: `${i.protocol ?? '00'}\n`,
        bInterfaceNumber: `${String(n).padStart(2, '0')}\n`,
      });
      await link(root, join(dir, ifName), ifName);
    }
    await link(root, dir, d.busId);
  }
}

/** Unplugs a device: removes its symlinks and its dir (with anything nested under it). */
export async function removeFixtureDevice(root: string, d: FixtureDevice): Promise<void> {
  const ifs = d.interfaces ?? [{ class: 'ff' }];
  await Promise.all(ifs.map(async (_, n) => rm(join(root, 'bus', 'usb', 'devices', `${d.busId}:1.${n}`), { force: true })));
  await rm(join(root, 'bus', 'usb', 'devices', d.busId), { force: true });
  await rm(fixtureDeviceDir(root, d), { recursive: true, force: true });
}
