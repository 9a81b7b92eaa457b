/**
 * USB device discovery from sysfs. Reads `<sysRoot>/bus/usb/devices/*` (symlinks into
 * `<sysRoot>/devices/...` on a real host, plain directories are accepted too) and turns every USB
 * device into a plain record. Root hubs (`usbN`), interfaces (`3-1:1.0`) and hubs (class 09) are
 * ignored; an entry with missing or garbage files is skipped with a reason and never stops the scan
 * (the original aborted the whole scan on one bad string file).
 */
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';

export interface UsbInterfaceInfo {
  class: string;
  subClass: string;
  protocol: string;
}

export interface UsbDeviceInfo {
  /** Basename of the sysfs dir, e.g. "3-1", "3-2.1.1". */
  busId: string;
  /** Absolute path of the device dir under the configured sys root (the `bus/usb/devices` entry). */
  sysPath: string;
  /** The entry with every symlink resolved (under `<sysRoot>/devices/...` on a real host). */
  realPath: string;
  busNum: number;
  devNum: number;
  /** 4 lowercase hex digits each. */
  vendorId: string;
  productId: string;
  bcdDevice: string;
  /** Raw sysfs `speed` text, e.g. "480", "1.5". */
  speed: string;
  /** 2 lowercase hex digits each. */
  deviceClass: string;
  deviceSubClass: string;
  deviceProtocol: string;
  /** 0 when the device is unconfigured (e.g. bound to usbip-host). */
  configurationValue: number;
  numConfigurations: number;
  /** 0 when the device is unconfigured. */
  numInterfaces: number;
  interfaces: UsbInterfaceInfo[];
  manufacturer?: string;
  product?: string;
  serial?: string;
  /** /dev/bus/usb/BBB/DDD */
  devicePath: string;
  major?: number;
  minor?: number;
  /** The bound driver (`usb`, `usbip-host`, ...), from uevent DRIVER. */
  driver?: string;
  /** True when the device sits behind a vhci_hcd controller (imported over USB/IP). */
  viaVhci: boolean;
}

export interface ScanProblem {
  path: string;
  reason: string;
}

export interface ScanResult {
  /** Devices sorted by busId. */
  devices: UsbDeviceInfo[];
  /** Entries that look like devices but could not be read: each is logged by the caller. */
  skipped: ScanProblem[];
  /** Entries deliberately left out (hubs); not errors. */
  ignored: ScanProblem[];
}

const HUB_CLASS = '09';
/** Devices read between two turns of the event loop. */
const YIELD_EVERY = 16;

/** The directory the scan lists. */
export function usbDevicesDir(sysRoot: string): string {
  return join(sysRoot, 'bus', 'usb', 'devices');
}

/** True for a USB device entry name (`1-2`, `3-2.1.4`), false for root hubs and interfaces. */
export function isDeviceEntryName(name: string): boolean {
  return /^\d+-\d+(\.\d+)*$/.test(name);
}

/** Scans every USB device under `sysRoot` (e.g. `/sys`). A missing `bus/usb/devices` is an empty scan. */
export async function scanUsbDevices(sysRoot: string): Promise<ScanResult> {
  const dir = usbDevicesDir(sysRoot);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err: unknown) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { devices: [], skipped: [], ignored: [] };
    throw err;
  }
  const out: ScanResult = { devices: [], skipped: [], ignored: [] };
  let sinceYield = 0;
  for (const name of names.filter(isDeviceEntryName)) {
    // sysfs files are tiny and never block: synchronous reads are ~10x faster than the thread pool;
    // the event loop gets a turn every few devices.
    if (++sinceYield % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
    const r = readDeviceEntrySync(join(dir, name));
    if (r.kind === 'device') out.devices.push(r.device);
    else if (r.kind === 'ignored') out.ignored.push(r.problem);
    else out.skipped.push(r.problem);
  }
  out.devices.sort((a, b) => compareBusIds(a.busId, b.busId));
  out.skipped.sort((a, b) => a.path.localeCompare(b.path));
  out.ignored.sort((a, b) => a.path.localeCompare(b.path));
  return out;
}

export type EntryResult = { kind: 'device'; device: UsbDeviceInfo } | { kind: 'skipped'; problem: ScanProblem } | { kind: 'ignored'; problem: ScanProblem };

/** Reads one `bus/usb/devices/<busId>` entry; never throws. */
export function readDeviceEntry(sysPath: string): Promise<EntryResult> {
  return Promise.resolve(readDeviceEntrySync(sysPath));
}

function readDeviceEntrySync(sysPath: string): EntryResult {
  try {
    const device = loadDevice(sysPath);
    if (device.deviceClass === HUB_CLASS) {
      return { kind: 'ignored', problem: { path: sysPath, reason: 'hub (class 09), not passed through' } };
    }
    return { kind: 'device', device };
  } catch (err: unknown) {
    return { kind: 'skipped', problem: { path: sysPath, reason: err instanceof Error ? err.message : String(err) } };
  }
}

/** A device entry is unusable; the message names the file and the problem. */
export class SysfsEntryError extends Error {
  readonly code = 'SYSFS_ENTRY_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'SysfsEntryError';
  }
}

function loadDevice(sysPath: string): UsbDeviceInfo {
  const busId = basename(sysPath);
  const realPath = realpathSync(sysPath);
  const files = new FileReader(sysPath);
  const [uevent, vendor, productIdRaw, bcd, busRaw, devRaw, speed, cls, subCls, proto, cfgValue, numCfgs, numIfs, manufacturer, product, serial, devFile] = [
    files.optional('uevent'),
    files.required('idVendor'),
    files.required('idProduct'),
    files.optional('bcdDevice'),
    files.required('busnum'),
    files.required('devnum'),
    files.required('speed'),
    files.required('bDeviceClass'),
    files.optional('bDeviceSubClass'),
    files.optional('bDeviceProtocol'),
    files.optional('bConfigurationValue'),
    files.optional('bNumConfigurations'),
    files.optional('bNumInterfaces'),
    files.optional('manufacturer'),
    files.optional('product'),
    files.optional('serial'),
    files.optional('dev'),
  ];
  const ev = parseUevent(uevent ?? '');
  const vendorId = hex4('idVendor', vendor);
  const productId = hex4('idProduct', productIdRaw);
  if (vendorId === '0000') throw new SysfsEntryError('idVendor: 0000 is not a device');
  const busNum = positiveInt('busnum', busRaw);
  const devNum = positiveInt('devnum', devRaw);
  if (!/^(\d+(\.\d+)?|unknown)$/.test(speed)) throw new SysfsEntryError(`speed: ${JSON.stringify(speed)} is not a speed`);
  const configurationValue = optionalInt('bConfigurationValue', cfgValue);
  const numInterfaces = optionalInt('bNumInterfaces', numIfs);
  const devName = ev.get('DEVNAME');
  const [major, minor] = majorMinor(ev, devFile);
  const device: UsbDeviceInfo = {
    busId,
    sysPath,
    realPath,
    busNum,
    devNum,
    vendorId,
    productId,
    bcdDevice: bcd === undefined || bcd === '' ? '0000' : hex4('bcdDevice', bcd),
    speed,
    deviceClass: hex2('bDeviceClass', cls),
    deviceSubClass: subCls === undefined || subCls === '' ? '00' : hex2('bDeviceSubClass', subCls),
    deviceProtocol: proto === undefined || proto === '' ? '00' : hex2('bDeviceProtocol', proto),
    configurationValue,
    numConfigurations: optionalInt('bNumConfigurations', numCfgs),
    numInterfaces,
    interfaces: readInterfaces(sysPath, busId, configurationValue),
    devicePath: devName ? `/dev/${devName}` : usbDevicePath(busNum, devNum),
    viaVhci: realPath.includes('vhci_hcd'),
  };
  if (manufacturer) device.manufacturer = manufacturer;
  if (product) device.product = product;
  if (serial) device.serial = serial;
  if (major !== undefined) device.major = major;
  if (minor !== undefined) device.minor = minor;
  const driver = ev.get('DRIVER');
  if (driver) device.driver = driver;
  return device;
}

/** `/dev/bus/usb/BBB/DDD` for a bus and device number. */
export function usbDevicePath(busNum: number, devNum: number): string {
  return `/dev/bus/usb/${pad3(busNum)}/${pad3(devNum)}`;
}

export function pad3(n: number): string {
  return String(n).padStart(3, '0');
}

/** Reads trimmed text files of one sysfs dir. Strings longer than a page are garbage. */
class FileReader {
  constructor(private readonly dir: string) {}

  optional(name: string): string | undefined {
    try {
      const text = readFileSync(join(this.dir, name), 'utf8');
      if (text.length > 4096) throw new SysfsEntryError(`${name}: longer than a sysfs page`);
      if (text.includes('\0')) throw new SysfsEntryError(`${name}: contains NUL bytes`);
      return text.trim();
    } catch (err: unknown) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENODEV') return undefined;
      if (err instanceof SysfsEntryError) throw err;
      throw new SysfsEntryError(`${name}: ${(err as Error).message}`);
    }
  }

  required(name: string): string {
    const text = this.optional(name);
    if (text === undefined) throw new SysfsEntryError(`${name}: missing`);
    if (text === '') throw new SysfsEntryError(`${name}: empty`);
    return text;
  }
}

function hex4(name: string, text: string): string {
  if (!/^[0-9a-fA-F]{4}$/.test(text)) throw new SysfsEntryError(`${name}: ${JSON.stringify(text)} is not 4 hex digits`);
  return text.toLowerCase();
}

function hex2(name: string, text: string): string {
  if (!/^[0-9a-fA-F]{2}$/.test(text)) throw new SysfsEntryError(`${name}: ${JSON.stringify(text)} is not 2 hex digits`);
  return text.toLowerCase();
}

function positiveInt(name: string, text: string): number {
  const n = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
  if (!(n > 0)) throw new SysfsEntryError(`${name}: ${JSON.stringify(text)} is not a positive number`);
  return n;
}

function optionalInt(name: string, text: string | undefined): number {
  if (text === undefined || text === '') return 0;
  if (!/^\d{1,9}$/.test(text)) throw new SysfsEntryError(`${name}: ${JSON.stringify(text)} is not a number`);
  return Number(text);
}

/** `KEY=value` lines of a uevent file. */
export function parseUevent(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  return out;
}

function majorMinor(ev: Map<string, string>, devFile: string | undefined): [number | undefined, number | undefined] {
  const fromUevent = [ev.get('MAJOR'), ev.get('MINOR')];
  const fromDev = devFile?.split(':') ?? [];
  const pick = (a: string | undefined, b: string | undefined, what: string): number | undefined => {
    const text = a ?? b;
    if (text === undefined || text === '') return undefined;
    if (!/^\d{1,9}$/.test(text)) throw new SysfsEntryError(`${what}: ${JSON.stringify(text)} is not a number`);
    return Number(text);
  };
  return [pick(fromUevent[0], fromDev[0], 'MAJOR'), pick(fromUevent[1], fromDev[1], 'MINOR')];
}

/** Interface dirs `<busId>:<cfg>.<n>` inside the device dir, in interface-number order. */
function readInterfaces(sysPath: string, busId: string, cfg: number): UsbInterfaceInfo[] {
  let names: string[];
  try {
    names = readdirSync(sysPath);
  } catch {
    return [];
  }
  const prefix = `${busId}:${cfg}.`;
  const ifNames = names
    .filter((n) => n.startsWith(prefix) && /^\d+$/.test(n.slice(prefix.length)))
    .sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)));
  return ifNames.map((n): UsbInterfaceInfo => {
    const files = new FileReader(join(sysPath, n));
    const [c, s, p] = [files.required('bInterfaceClass'), files.required('bInterfaceSubClass'), files.required('bInterfaceProtocol')];
    return { class: hex2(`${n}/bInterfaceClass`, c), subClass: hex2(`${n}/bInterfaceSubClass`, s), protocol: hex2(`${n}/bInterfaceProtocol`, p) };
  });
}

/** Orders `3-2` before `3-10` and `3-2.1` after `3-2`. */
export function compareBusIds(a: string, b: string): number {
  const pa = a.split(/[-.]/).map(Number);
  const pb = b.split(/[-.]/).map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? -1) - (pb[i] ?? -1);
    if (d !== 0) return d;
  }
  return 0;
}

export { writeFixtureSysfs, type FixtureDevice, type FixtureInterface } from '../../../shared/testing/fixture-sysfs.js';
