/**
 * USB passthrough: NodeUSBDevice (nusb, cluster-wide) is a device found on a node; assigning it to a
 * namespace creates the USBDevice (usb) there, which VMs of that namespace can use.
 */
import { z } from 'zod';
import { AGE_COLUMN, conditionColumn, type ResourceDefinition } from '../k8s/crd.js';
import { ObjectMetaSchema } from '../k8s/core.js';
import { int32 } from '../k8s/schema.js';
import { API_VERSION, conditions, observedGeneration, rootSchema, publicNames } from './common.js';

const text = (what: string) => z.string().optional().describe(what);

export const USBDeviceAttributesSchema = z
  .strictObject({
    bcd: text('Device release number (bcdDevice).'),
    bus: text('USB bus number on the node.'),
    deviceNumber: text('Device number on the bus.'),
    devicePath: text('Device path under /sys/bus/usb/devices.'),
    major: int32().optional().describe('Major device number.'),
    manufacturer: text('Manufacturer string.'),
    minor: int32().optional().describe('Minor device number.'),
    name: text('Device name.'),
    nodeName: text('Node the device is plugged into.'),
    product: text('Product string.'),
    productID: text('USB product ID (hex).'),
    serial: text('Serial number.'),
    speed: int32().optional().describe('Speed in Mbit/s.'),
    vendorID: text('USB vendor ID (hex).'),
  })
  .describe('Attributes of the USB device as read on its node.');

const usbStatusShape = {
  attributes: USBDeviceAttributesSchema.optional(),
  nodeName: text('Node the device is plugged into.'),
  conditions: conditions(),
  observedGeneration: observedGeneration(),
};

export const NodeUSBDeviceSchema = rootSchema(
  API_VERSION,
  'NodeUSBDevice',
  z
    .strictObject({
      assignedNamespace: z.string().default('').describe('Namespace in which the device may be used; when set, a USBDevice is created there.'),
    })
    .describe('Assignment of the device.'),
  z.strictObject(usbStatusShape).describe('Observed state of the device.'),
);
export type NodeUSBDevice = z.infer<typeof NodeUSBDeviceSchema>;

/** USBDevice has no spec: it mirrors a NodeUSBDevice assigned to its namespace. */
export const USBDeviceSchema = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('USBDevice'),
  metadata: ObjectMetaSchema,
  status: z.strictObject(usbStatusShape).describe('Observed state of the device.').optional(),
});
export type USBDevice = z.infer<typeof USBDeviceSchema>;

export const nodeUSBDevice: ResourceDefinition<typeof NodeUSBDeviceSchema> = {
  ...publicNames('NodeUSBDevice', 'nodeusbdevices', 'Cluster', ['nusb'], ['virtualization']),
  description: 'A USB device discovered on a node, and the namespace it is assigned to.',
  schema: NodeUSBDeviceSchema,
  printerColumns: [
    { name: 'Node', type: 'string', jsonPath: '.status.nodeName' },
    conditionColumn('Ready', 'Ready'),
    conditionColumn('Assigned', 'Assigned'),
    conditionColumn('Attached', 'Attached'),
    { name: 'Namespace', type: 'string', jsonPath: '.spec.assignedNamespace' },
    AGE_COLUMN,
  ],
};

const attribute = (name: string, field: string, priority?: number) => ({
  name,
  type: 'string' as const,
  jsonPath: `.status.attributes.${field}`,
  ...(priority !== undefined ? { priority } : {}),
});

export const usbDevice: ResourceDefinition<typeof USBDeviceSchema> = {
  ...publicNames('USBDevice', 'usbdevices', 'Namespaced', ['usb']),
  description: 'A USB device assigned to this namespace, usable by its virtual machines.',
  schema: USBDeviceSchema,
  printerColumns: [
    { name: 'Node', type: 'string', jsonPath: '.status.nodeName' },
    attribute('VendorID', 'vendorID', 1),
    attribute('ProductID', 'productID', 1),
    attribute('Bus', 'bus', 1),
    attribute('DeviceNumber', 'deviceNumber', 1),
    attribute('Manufacturer', 'manufacturer'),
    attribute('Product', 'product'),
    attribute('Serial', 'serial', 1),
    conditionColumn('Attached', 'Attached'),
    AGE_COLUMN,
  ],
};
