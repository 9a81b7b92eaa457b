/**
 * From the discovery's sysfs records (daemons/dra/discovery) to USB/IP device records: which devices
 * may be exported, the speed enum, and the path as the kernel would show it (`/sys/devices/...`),
 * whatever root the scan read.
 */
import { relative } from 'node:path';
import type { UsbDeviceInfo } from '../discovery/index.js';
import type { DevlistEntry, UsbipDevice } from './op-codec.js';

/** enum usb_device_speed from the sysfs `speed` text (Mbit/s). */
const SPEEDS: Readonly<Record<string, number>> = { '1.5': 1, '12': 2, '480': 3, '5000': 5, '10000': 6, '20000': 6 };

export function speedEnum(sysfsSpeed: string): number {
  return SPEEDS[sysfsSpeed.trim()] ?? 0;
}

/**
 * Exportable: a real device of this node. Devices that are themselves imported over USB/IP (behind
 * vhci_hcd) are not re-exported (the Linux stub refuses them too); hubs never reach this list.
 */
export function isExportable(d: UsbDeviceInfo): boolean {
  return !d.viaVhci;
}

const hexField = (text: string): number => {
  const n = Number.parseInt(text, 16);
  return Number.isFinite(n) ? n : 0;
};

export function toUsbipDevice(d: UsbDeviceInfo, sysRoot: string): UsbipDevice {
  const rel = relative(sysRoot, d.realPath);
  const path = rel.startsWith('..') ? d.realPath : `/sys/${rel}`;
  return {
    path: Buffer.byteLength(path) < 256 ? path : `/sys/bus/usb/devices/${d.busId}`,
    busId: d.busId,
    busNum: d.busNum,
    devNum: d.devNum,
    speed: speedEnum(d.speed),
    idVendor: hexField(d.vendorId),
    idProduct: hexField(d.productId),
    bcdDevice: hexField(d.bcdDevice),
    bDeviceClass: hexField(d.deviceClass),
    bDeviceSubClass: hexField(d.deviceSubClass),
    bDeviceProtocol: hexField(d.deviceProtocol),
    bConfigurationValue: d.configurationValue,
    bNumConfigurations: d.numConfigurations,
    bNumInterfaces: d.interfaces.length,
  };
}

export function toDevlistEntry(d: UsbDeviceInfo, sysRoot: string): DevlistEntry {
  return {
    device: toUsbipDevice(d, sysRoot),
    interfaces: d.interfaces.map((i) => ({
      bInterfaceClass: hexField(i.class),
      bInterfaceSubClass: hexField(i.subClass),
      bInterfaceProtocol: hexField(i.protocol),
    })),
  };
}
