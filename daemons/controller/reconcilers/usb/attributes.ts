/**
 * Pure: what the USB reconcilers derive from a ResourceSlice of the DRA driver (facts §3.2): the
 * NodeUSBDevice name and attributes of each `usb-` device, and the ResourceClaimTemplate of a
 * USBDevice (§3.4).
 */
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { USBDeviceAttributesSchema } from '../../../../shared/api/resources/usb.js';
import type { ResourceClaimTemplate, ResourceSlice, SliceDevice } from '../../../../shared/api/k8s/resource.js';

export type USBDeviceAttributes = z.infer<typeof USBDeviceAttributesSchema>;

export const DRA_DRIVER = 'virtualization-usb';
export const DEVICE_CLASS = 'usb-devices.virtualization.deckhouse.io';
export const CLAIM_SPEC_HASH_ANNOTATION = 'internal.virtualization.deckhouse.io/usb-claim-spec-hash';
/** uid/gid the original gives the device node in the VM's pod (qemu's user). */
const DEVICE_OWNER = '64535';

export function isUsbDevice(name: string): boolean {
  return name.startsWith('usb-');
}

/** NodeUSBDevice name of a slice device: lower case, dots to dashes. */
export function nodeUSBDeviceName(deviceName: string): string {
  return deviceName.toLowerCase().replaceAll('.', '-');
}

const STRING_ATTRS = ['manufacturer', 'product', 'vendorID', 'productID', 'bcd', 'bus', 'deviceNumber', 'serial', 'devicePath'] as const;
const INT_ATTRS = ['major', 'minor', 'speed'] as const;

/** Status attributes of a slice device; nodeName is the pool name; busID, path, usbAddress not copied. */
export function attributesOf(device: SliceDevice, poolName: string): USBDeviceAttributes {
  const a = device.attributes ?? {};
  const out: USBDeviceAttributes = { nodeName: poolName, name: a['name']?.string ?? device.name };
  for (const k of STRING_ATTRS) if (a[k]?.string !== undefined) out[k] = a[k].string;
  for (const k of INT_ATTRS) if (a[k]?.int !== undefined) out[k] = a[k].int;
  return out;
}

/** The `usb-` devices of a slice of the driver. */
export function usbDevicesOf(slice: ResourceSlice): SliceDevice[] {
  if (slice.spec.driver !== DRA_DRIVER) return [];
  return (slice.spec.devices ?? []).filter((d) => isUsbDevice(d.name));
}

/** The claim template spec of a USBDevice: one device of the class whose `name` attribute matches. */
export function claimTemplateSpec(usbDeviceName: string, attributeName: string): ResourceClaimTemplate['spec'] {
  return {
    metadata: { annotations: { 'usb.virtualization.deckhouse.io/device-group': DEVICE_OWNER, 'usb.virtualization.deckhouse.io/device-user': DEVICE_OWNER } },
    spec: {
      devices: {
        requests: [
          {
            name: `req-${usbDeviceName}`,
            exactly: {
              deviceClassName: DEVICE_CLASS,
              allocationMode: 'ExactCount',
              count: 1,
              selectors: [{ cel: { expression: `device.attributes["${DRA_DRIVER}"].name == "${attributeName}"` } }],
            },
          },
        ],
      },
    },
  };
}

/** md5 hex of the spec's JSON, as the original's drift annotation. */
export function specHash(spec: unknown): string {
  return createHash('md5').update(JSON.stringify(spec)).digest('hex');
}

export function sameAttributes(a: USBDeviceAttributes | undefined, b: USBDeviceAttributes): boolean {
  return JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b).sort());
}
