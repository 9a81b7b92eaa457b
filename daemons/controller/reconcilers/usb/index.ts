/**
 * The USB reconcilers with their own informers and runners: ResourceSlices (of the DRA driver),
 * NodeUSBDevices, USBDevices, Namespaces and ResourceClaimTemplates are watched; each change enqueues
 * the objects it affects. Started beside the other reconcilers; it never delays them (an apiserver
 * without resource.k8s.io/v1 only keeps these informers retrying).
 */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../../shared/api/k8s/core.js';
import { NodeUSBDeviceSchema, USBDeviceSchema, nodeUSBDevice, usbDevice, type NodeUSBDevice, type USBDevice } from '../../../../shared/api/resources/usb.js';
import {
  Informer,
  descriptorOf,
  objectKey,
  withoutManagedFields,
  type KubeClient,
  type KubeObject,
  type ResourceDescriptor,
} from '../../../../shared/kube/index.js';
import type { Logger } from '../../../../shared/log/index.js';
import {
  ResourceClaimTemplateSchema,
  ResourceSliceSchema,
  resourceClaimTemplateDescriptor,
  resourceSliceDescriptor,
  type ResourceClaimTemplate,
  type ResourceSlice,
} from '../../../../shared/api/k8s/resource.js';
import { ObjectCache } from '../../engine/cache.js';
import { Runner, type ReconcileFn } from '../../engine/runner.js';
import { FIELD_MANAGER } from '../../kube/resources.js';
import { attributesOf, nodeUSBDeviceName, usbDevicesOf } from './attributes.js';
import { nodeUSBDeviceReconciler, resourceSliceReconciler, UsbIndex, usbDeviceReconciler, type UsbDeps } from './reconcilers.js';

const namespaceDescriptor: ResourceDescriptor = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false };
const NamespaceSchema = z.looseObject({ apiVersion: z.string().optional(), kind: z.string().optional(), metadata: ObjectMetaSchema });

export interface UsbReconcilers {
  readonly deps: UsbDeps;
  /** All informers synced (never resolves while resource.k8s.io/v1 is not served). */
  readonly synced: Promise<void>;
  stop(): Promise<void>;
}

function cacheOf<T extends KubeObject>(
  kube: KubeClient,
  descriptor: ResourceDescriptor,
  schema: z.ZodType<T>,
  signal: AbortSignal,
  log: Logger,
): ObjectCache<T> {
  const client = kube.resource(descriptor, schema, FIELD_MANAGER);
  return new ObjectCache(new Informer<T>({ client, signal, logger: log.child({ informer: descriptor.kind }), transform: withoutManagedFields }));
}

export function startUsbReconcilers(options: { kube: KubeClient; signal: AbortSignal; log: Logger; workers?: number }): UsbReconcilers {
  const { kube, signal, log } = options;
  const slices = cacheOf<ResourceSlice>(kube, resourceSliceDescriptor, ResourceSliceSchema, signal, log);
  const nodeDevices = cacheOf<NodeUSBDevice>(kube, descriptorOf(nodeUSBDevice), NodeUSBDeviceSchema, signal, log);
  const usbDevices = cacheOf<USBDevice>(kube, descriptorOf(usbDevice), USBDeviceSchema, signal, log);
  const namespaces = cacheOf<KubeObject>(kube, namespaceDescriptor, NamespaceSchema, signal, log);
  const templates = cacheOf<ResourceClaimTemplate>(kube, resourceClaimTemplateDescriptor, ResourceClaimTemplateSchema, signal, log);
  slices.addIndex(UsbIndex.slicesByPool, (s) => [s.spec.pool.name]);
  usbDevices.addIndex(UsbIndex.usbDevicesByName, (u) => [u.metadata.name ?? '']);
  nodeDevices.addIndex(UsbIndex.nodeDevicesByNamespace, (n) => (n.spec.assignedNamespace ? [n.spec.assignedNamespace] : []));
  const deps: UsbDeps = {
    caches: { slices, nodeDevices, usbDevices, namespaces, templates },
    clients: {
      nodeDevices: kube.resource(descriptorOf(nodeUSBDevice), NodeUSBDeviceSchema, FIELD_MANAGER),
      usbDevices: kube.resource(descriptorOf(usbDevice), USBDeviceSchema, FIELD_MANAGER),
      templates: kube.resource(resourceClaimTemplateDescriptor, ResourceClaimTemplateSchema, FIELD_MANAGER),
    },
  };
  const runner = (name: string, reconcile: ReconcileFn): Runner =>
    new Runner({ name, workers: options.workers ?? 2, reconcile, signal, logger: log.child({ controller: name }) });
  const sliceRunner = runner('usb-resourceslice', resourceSliceReconciler(deps));
  const nodeRunner = runner('nodeusbdevice', nodeUSBDeviceReconciler(deps));
  const usbRunner = runner('usbdevice', usbDeviceReconciler(deps));

  const onSlice = (s: ResourceSlice): void => {
    const devices = usbDevicesOf(s);
    if (devices.length === 0 && s.spec.driver !== 'virtualization-usb') return;
    sliceRunner.enqueue(s.metadata.name ?? '');
    for (const d of devices) nodeRunner.enqueue(nodeUSBDeviceName(attributesOf(d, s.spec.pool.name).name ?? d.name));
    // Devices gone from the pool: their NodeUSBDevices turn NotFound.
    for (const n of nodeDevices.list()) if (n.status?.nodeName === s.spec.pool.name) nodeRunner.enqueue(n.metadata.name ?? '');
  };
  for (const ev of ['add', 'update', 'delete'] as const) {
    slices.informer.on(ev, onSlice);
    nodeDevices.informer.on(ev, (n: NodeUSBDevice) => {
      nodeRunner.enqueue(n.metadata.name ?? '');
      if (n.spec.assignedNamespace) usbRunner.enqueue(`${n.spec.assignedNamespace}/${n.metadata.name ?? ''}`);
      for (const u of usbDevices.byIndex(UsbIndex.usbDevicesByName, n.metadata.name ?? '')) usbRunner.enqueue(objectKey(u.metadata));
      // A deleted NodeUSBDevice whose device still exists is created again by its slice.
      if (ev === 'delete') for (const r of n.metadata.ownerReferences ?? []) if (r.kind === 'ResourceSlice') sliceRunner.enqueue(r.name);
    });
    usbDevices.informer.on(ev, (u: USBDevice) => {
      usbRunner.enqueue(objectKey(u.metadata));
      nodeRunner.enqueue(u.metadata.name ?? '');
    });
    namespaces.informer.on(ev, (ns: KubeObject) => {
      for (const n of nodeDevices.byIndex(UsbIndex.nodeDevicesByNamespace, ns.metadata.name ?? '')) nodeRunner.enqueue(n.metadata.name ?? '');
    });
    templates.informer.on(ev, (t: ResourceClaimTemplate) => {
      const owner = t.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'USBDevice');
      if (owner !== undefined) usbRunner.enqueue(`${t.metadata.namespace ?? ''}/${owner.name}`);
    });
  }

  const caches = [slices, nodeDevices, usbDevices, namespaces, templates];
  for (const c of caches) c.informer.start();
  const synced = Promise.all(caches.map((c) => c.synced)).then(() => {
    if (signal.aborted) return;
    for (const r of [sliceRunner, nodeRunner, usbRunner]) r.start();
    log.info('USB reconcilers running');
  });
  synced.catch(() => undefined);
  return {
    deps,
    synced,
    stop: async () => {
      await Promise.all([sliceRunner, nodeRunner, usbRunner].map((r) => r.stop()));
      await Promise.all(caches.map((c) => c.informer.stop()));
    },
  };
}
