/**
 * What the three USB reconcilers share, built once (`w.shared(usbParts)`): their informers
 * (ResourceSlices of the DRA driver, NodeUSBDevices, USBDevices, Namespaces, ResourceClaimTemplates,
 * the VMs' ResourceClaims), their dependencies, and the port the VM reconciler reads spec.usbDevices
 * through, filled once these caches sync. They watch in the controller's scopes (`scopesOf`):
 * namespaced kinds in WATCH_NAMESPACE, NodeUSBDevices by CLUSTER_OBJECTS_SELECTOR, Namespaces only
 * WATCH_NAMESPACE itself; ResourceSlices all (a slice is ours when its node is in the Node cache).
 */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../../shared/api/k8s/core.js';
import { NodeUSBDeviceSchema, USBDeviceSchema, nodeUSBDevice, usbDevice, type NodeUSBDevice, type USBDevice } from '../../../../shared/api/resources/usb.js';
import { descriptorOf, type KubeObject, type ResourceDescriptor } from '../../../../shared/kube/index.js';
import {
  ResourceClaimSchema,
  ResourceClaimTemplateSchema,
  ResourceSliceSchema,
  resourceClaimDescriptor,
  resourceClaimTemplateDescriptor,
  resourceSliceDescriptor,
  type ResourceClaim,
  type ResourceClaimTemplate,
  type ResourceSlice,
} from '../../../../shared/api/k8s/resource.js';
import { scopesOf } from '../../caches.js';
import type { Wiring } from '../../declaration.js';
import type { VmUsbPort } from '../../deps.js';
import type { ObjectCache } from '../../engine/cache.js';
import { ReadyPort } from '../../engine/ready-port.js';
import { FIELD_MANAGER } from '../../kube/resources.js';
import { USB_CLAIMS_BY_VM } from '../vm/handlers/usb-devices.js';
import { USB_DEVICE_LABEL } from '../vm/usb.js';
import { subresourceHotplug } from '../vmbda/hotplug.js';
import { UsbIndex, type UsbDeps } from './deps.js';

const namespaceDescriptor: ResourceDescriptor = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false };
const NamespaceSchema = z.looseObject({ apiVersion: z.string().optional(), kind: z.string().optional(), metadata: ObjectMetaSchema });

export interface UsbParts {
  readonly deps: UsbDeps;
  readonly slices: ObjectCache<ResourceSlice>;
  readonly nodeDevices: ObjectCache<NodeUSBDevice>;
  readonly usbDevices: ObjectCache<USBDevice>;
  readonly namespaces: ObjectCache<KubeObject>;
  readonly templates: ObjectCache<ResourceClaimTemplate>;
  /** Only the claims the controller makes for VMs (labelled with their USBDevice). */
  readonly claims: ObjectCache<ResourceClaim>;
  /** Every USB cache: the USB reconcilers start once these sync. */
  readonly all: readonly ObjectCache<KubeObject>[];
  /** What the VM reconciler uses for spec.usbDevices: fills once the USB caches sync, stays empty while USB is off. */
  readonly vmPort: ReadyPort<VmUsbPort>;
}

export function usbParts(w: Wiring): UsbParts {
  const scopes = scopesOf(w.config);
  const client = <T extends KubeObject>(descriptor: ResourceDescriptor, schema: z.ZodType<T>) => w.kube.resource(descriptor, schema, FIELD_MANAGER);
  const watched = scopes.namespaced.namespace;
  // Slices are the DRA daemons' (never labelled for a scope): all are watched.
  const slices = w.informer(client<ResourceSlice>(resourceSliceDescriptor, ResourceSliceSchema), {});
  const nodeDevices = w.informer(client<NodeUSBDevice>(descriptorOf(nodeUSBDevice), NodeUSBDeviceSchema), scopes.clusterScoped);
  const usbDevices = w.informer(client<USBDevice>(descriptorOf(usbDevice), USBDeviceSchema), scopes.namespaced);
  // Only whether an assigned namespace exists is read: the watched one alone when scoped.
  const namespaces = w.informer(
    client<KubeObject>(namespaceDescriptor, NamespaceSchema),
    watched === undefined ? {} : { fieldSelector: `metadata.name=${watched}` },
  );
  const templates = w.informer(client<ResourceClaimTemplate>(resourceClaimTemplateDescriptor, ResourceClaimTemplateSchema), scopes.namespaced);
  const claimClient = client<ResourceClaim>(resourceClaimDescriptor, ResourceClaimSchema);
  const claims = w.informer(claimClient, { ...scopes.namespaced, labelSelector: USB_DEVICE_LABEL });
  claims.addIndex(
    USB_CLAIMS_BY_VM,
    (c) => c.metadata.ownerReferences?.filter((r) => r.controller === true && r.kind === 'VirtualMachine').map((r) => r.uid) ?? [],
  );
  slices.addIndex(UsbIndex.slicesByPool, (s) => [s.spec.pool.name]);
  usbDevices.addIndex(UsbIndex.usbDevicesByName, (u) => [u.metadata.name ?? '']);
  nodeDevices.addIndex(UsbIndex.nodeDevicesByNamespace, (n) => (n.spec.assignedNamespace ? [n.spec.assignedNamespace] : []));
  const deps: UsbDeps = {
    caches: { slices, nodeDevices, usbDevices, namespaces, templates, nodes: w.caches.nodes, vms: w.caches.vms },
    scopes,
    clients: {
      nodeDevices: client(descriptorOf(nodeUSBDevice), NodeUSBDeviceSchema),
      usbDevices: client(descriptorOf(usbDevice), USBDeviceSchema),
      templates: client(resourceClaimTemplateDescriptor, ResourceClaimTemplateSchema),
    },
  };
  const all = [slices, nodeDevices, usbDevices, namespaces, templates, claims] as unknown as ObjectCache<KubeObject>[];
  const vmPort = new ReadyPort<VmUsbPort>();
  const hotplug = w.ports.claims ?? subresourceHotplug(w.kube);
  // A stop before they synced rejects `synced`: nothing to attach then.
  Promise.all(all.map((c) => c.synced)).then(
    () => {
      if (!w.signal.aborted) vmPort.set({ usbDevices, templates, claims, claimClient, hotplug });
    },
    () => undefined,
  );
  return { deps, slices, nodeDevices, usbDevices, namespaces, templates, claims, all, vmPort };
}
