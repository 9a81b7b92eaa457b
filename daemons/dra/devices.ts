/**
 * Pure: from discovered USB devices to the ResourceSlices of one node's pool. Device names and
 * attributes are the original's (facts: deckhouse-aux-components §2.5), so claims, DeviceClass CEL and
 * the controller's NodeUSBDevices are interchangeable with it.
 */
import { createHash } from 'node:crypto';
import type { OwnerReference } from '../../shared/api/k8s/core.js';
import { pad3, type UsbDeviceInfo } from './discovery/index.js';
import type { DeviceAttribute, ResourceSlice, SliceDevice } from '../../shared/api/k8s/resource.js';

export const DEFAULT_DRIVER_NAME = 'virtualization-usb';
/** The API's limit of devices in one slice. */
export const MAX_DEVICES_PER_SLICE = 128;
/** The API's limit of a string attribute value. */
const MAX_STRING_ATTRIBUTE = 64;

/** `usb-` + sha1 of `<busId>-<vendor>-<product>-<node>`: stable per port, model and node (not serial). */
export function usbDeviceName(d: Pick<UsbDeviceInfo, 'busId' | 'vendorId' | 'productId'>, nodeName: string): string {
  return `usb-${createHash('sha1').update(`${d.busId}-${d.vendorId}-${d.productId}-${nodeName}`).digest('hex')}`;
}

/** `BBB:DDD`, the address the VM side passes through. */
export function usbAddress(d: Pick<UsbDeviceInfo, 'busNum' | 'devNum'>): string {
  return `${pad3(d.busNum)}:${pad3(d.devNum)}`;
}

const str = (value: string): DeviceAttribute => ({ string: value.slice(0, MAX_STRING_ATTRIBUTE) });

/** The slice entry of one device with the original's attribute set (absent strings are left out). */
export function sliceDevice(d: UsbDeviceInfo, nodeName: string): SliceDevice {
  const name = usbDeviceName(d, nodeName);
  const attributes: Record<string, DeviceAttribute> = {
    name: str(name),
    path: str(d.sysPath),
    busID: str(d.busId),
    vendorID: str(d.vendorId),
    productID: str(d.productId),
    bcd: str(d.bcdDevice),
    bus: str(pad3(d.busNum)),
    deviceNumber: str(pad3(d.devNum)),
    speed: { int: Math.floor(Number(d.speed) || 0) },
    devicePath: str(d.devicePath),
    usbAddress: str(usbAddress(d)),
  };
  if (d.manufacturer !== undefined) attributes.manufacturer = str(d.manufacturer);
  if (d.product !== undefined) attributes.product = str(d.product);
  if (d.serial !== undefined) attributes.serial = str(d.serial);
  if (d.major !== undefined) attributes.major = { int: d.major };
  if (d.minor !== undefined) attributes.minor = { int: d.minor };
  return { name, attributes };
}

/** The devices a node offers: everything discovered except devices imported over USB/IP (vhci_hcd). */
export function allocatableDevices(devices: readonly UsbDeviceInfo[]): UsbDeviceInfo[] {
  return devices.filter((d) => !d.viaVhci);
}

export interface PoolInput {
  driver: string;
  nodeName: string;
  generation: number;
  devices: readonly SliceDevice[];
  owner?: OwnerReference | undefined;
}

/** `<node>-<driver>-<index>`, shortened with a hash when the node name is very long. */
export function sliceName(driver: string, nodeName: string, index: number): string {
  const base = `${nodeName}-${driver}`;
  const safe = base.length <= 240 ? base : `${base.slice(0, 200)}-${createHash('sha1').update(base).digest('hex').slice(0, 12)}`;
  return `${safe}-${index}`;
}

/**
 * The slices of the node's pool (pool name = node name): devices sorted by name, at most 128 per
 * slice, every slice carrying the pool's generation and count. No device: one empty slice, so the
 * scheduler sees the pool (and its generation) is current.
 */
export function buildSlices(input: PoolInput): ResourceSlice[] {
  const sorted = [...input.devices].sort((a, b) => a.name.localeCompare(b.name));
  const chunks: SliceDevice[][] = [];
  for (let i = 0; i < sorted.length; i += MAX_DEVICES_PER_SLICE) chunks.push(sorted.slice(i, i + MAX_DEVICES_PER_SLICE));
  if (chunks.length === 0) chunks.push([]);
  return chunks.map((devices, index) => ({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceSlice',
    metadata: {
      name: sliceName(input.driver, input.nodeName, index),
      ...(input.owner ? { ownerReferences: [input.owner] } : {}),
    },
    spec: {
      driver: input.driver,
      pool: { name: input.nodeName, generation: input.generation, resourceSliceCount: chunks.length },
      nodeName: input.nodeName,
      devices,
    },
  }));
}

/** A stable text of the pool's content (devices only), to publish only on a change. */
export function poolFingerprint(devices: readonly SliceDevice[]): string {
  return JSON.stringify([...devices].sort((a, b) => a.name.localeCompare(b.name)));
}
