/**
 * The USB reconcilers with their own informers and runners: ResourceSlices (of the DRA driver),
 * NodeUSBDevices, USBDevices, Namespaces and ResourceClaimTemplates are watched; each change enqueues
 * the objects it affects. Started beside the other reconcilers; it never delays them (an apiserver
 * without resource.k8s.io/v1 only keeps these informers retrying). They watch in the controller's
 * scopes (`scopesOf`): namespaced kinds in WATCH_NAMESPACE, NodeUSBDevices and Nodes by
 * CLUSTER_OBJECTS_SELECTOR, Namespaces only WATCH_NAMESPACE itself.
 */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../../shared/api/k8s/core.js';
import { NodeUSBDeviceSchema, USBDeviceSchema, nodeUSBDevice, usbDevice, type NodeUSBDevice, type USBDevice } from '../../../../shared/api/resources/usb.js';
import { Informer, descriptorOf, objectKey, type KubeClient, type KubeObject, type ResourceDescriptor } from '../../../../shared/kube/index.js';
import type { Logger } from '../../../../shared/log/index.js';
import {
  ResourceClaimSchema,
  ResourceClaimTemplateSchema,
  ResourceSliceSchema,
  nodeDescriptor,
  resourceClaimDescriptor,
  resourceClaimTemplateDescriptor,
  resourceSliceDescriptor,
  type ResourceClaim,
  type ResourceClaimTemplate,
  type ResourceSlice,
} from '../../../../shared/api/k8s/resource.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VmUsbPort } from '../../deps.js';
import { informerCache, type Scope } from '../../caches.js';
import { NodeSchema, nodeView, type Node } from '../../kube/resources.js';
import { USB_CLAIMS_BY_VM } from '../vm/handlers/usb-devices.js';
import { VMIndex } from '../vm/state.js';
import { deepEqual } from '../../engine/merge-diff.js';
import { USB_DEVICE_LABEL } from '../vm/usb.js';
import type { ClaimHotplug } from '../vmbda/hotplug.js';
import { ObjectCache } from '../../engine/cache.js';
import { Runner, type ReconcileFn } from '../../engine/runner.js';
import { FIELD_MANAGER } from '../../kube/resources.js';
import { attributesOf, nodeUSBDeviceName, usbDevicesOf } from './attributes.js';
import { UsbIndex, type UsbDeps } from './deps.js';
import { nodeUSBDeviceReconciler } from './nodeusbdevice/reconciler.js';
import { resourceSliceReconciler } from './resourceslice/reconciler.js';
import { usbDeviceReconciler } from './usbdevice/reconciler.js';

const namespaceDescriptor: ResourceDescriptor = { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false };
const NamespaceSchema = z.looseObject({ apiVersion: z.string().optional(), kind: z.string().optional(), metadata: ObjectMetaSchema });

export interface UsbReconcilers {
  readonly deps: UsbDeps;
  /** What the VM reconciler uses for spec.usbDevices (present when started with `vms`). */
  readonly vmPort: VmUsbPort | undefined;
  /** All informers synced (never resolves while resource.k8s.io/v1 is not served). */
  readonly synced: Promise<void>;
  stop(): Promise<void>;
}

/** The scopes of `scopesOf(config)`: what the controller reconciles (all when both are empty). */
export interface UsbScopes {
  namespaced: Scope;
  clusterScoped: Scope;
}

/**
 * The VM side, when the controller runs them: its VM cache (the VMs' spec.usbDevices make USBDevices
 * Attached, and hold their deletion), a way to wake a VM when one of its devices, templates or claims
 * changes, and the port addresourceclaim/removeresourceclaim go through.
 */
export interface UsbVmSide {
  vms: ObjectCache<VirtualMachine>;
  /** The controller's Node cache (in its cluster scope): USB/IP port annotations of the VMs' nodes, and the nodes whose slices are ours. */
  nodes: ObjectCache<Node>;
  enqueueVM(key: string): void;
  hotplug: ClaimHotplug;
}

export function startUsbReconcilers(options: {
  kube: KubeClient;
  signal: AbortSignal;
  log: Logger;
  /** The controller's scopes (`scopesOf(config)`). */
  scopes: UsbScopes;
  workers?: number;
  vm?: UsbVmSide;
}): UsbReconcilers {
  const { kube, signal, log, vm, scopes } = options;
  const cache = <T extends KubeObject>(descriptor: ResourceDescriptor, schema: z.ZodType<T>, scope: Scope): ObjectCache<T> =>
    informerCache(kube.resource(descriptor, schema, FIELD_MANAGER), scope, signal, log);
  // Slices are the DRA daemons' (never labelled for a scope): all are watched, a slice is ours when its node is.
  const slices = cache<ResourceSlice>(resourceSliceDescriptor, ResourceSliceSchema, {});
  const nodeDevices = cache<NodeUSBDevice>(descriptorOf(nodeUSBDevice), NodeUSBDeviceSchema, scopes.clusterScoped);
  const usbDevices = cache<USBDevice>(descriptorOf(usbDevice), USBDeviceSchema, scopes.namespaced);
  // Only whether an assigned namespace exists is read: the watched one alone when scoped.
  const watched = scopes.namespaced.namespace;
  const namespaces = cache<KubeObject>(namespaceDescriptor, NamespaceSchema, watched === undefined ? {} : { fieldSelector: `metadata.name=${watched}` });
  const templates = cache<ResourceClaimTemplate>(resourceClaimTemplateDescriptor, ResourceClaimTemplateSchema, scopes.namespaced);
  // Alone (no controller caches): a Node cache of our own, in the same cluster scope.
  const ownNodes =
    vm === undefined ? informerCache(kube.resource(nodeDescriptor, NodeSchema, FIELD_MANAGER), scopes.clusterScoped, signal, log, nodeView) : undefined;
  const nodes = vm?.nodes ?? ownNodes;
  if (nodes === undefined) throw new Error('startUsbReconcilers: no Node cache');
  // Only the claims the controller makes for VMs (labelled with their USBDevice).
  const claims =
    vm === undefined
      ? undefined
      : new ObjectCache<ResourceClaim>(
          new Informer<ResourceClaim>({
            client: kube.resource(resourceClaimDescriptor, ResourceClaimSchema, FIELD_MANAGER),
            labelSelector: USB_DEVICE_LABEL,
            ...(watched === undefined ? {} : { namespace: watched }),
            signal,
            logger: log.child({ informer: 'ResourceClaim' }),
          }),
        );
  claims?.addIndex(
    USB_CLAIMS_BY_VM,
    (c) => c.metadata.ownerReferences?.filter((r) => r.controller === true && r.kind === 'VirtualMachine').map((r) => r.uid) ?? [],
  );
  slices.addIndex(UsbIndex.slicesByPool, (s) => [s.spec.pool.name]);
  usbDevices.addIndex(UsbIndex.usbDevicesByName, (u) => [u.metadata.name ?? '']);
  nodeDevices.addIndex(UsbIndex.nodeDevicesByNamespace, (n) => (n.spec.assignedNamespace ? [n.spec.assignedNamespace] : []));
  const deps: UsbDeps = {
    caches: { slices, nodeDevices, usbDevices, namespaces, templates, nodes, ...(vm ? { vms: vm.vms } : {}) },
    scopes,
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
    // A node entering the scope (labelled late, or seen after its slices): its slices are ours now.
    nodes.informer.on(ev, (n: Node) => {
      for (const s of slices.byIndex(UsbIndex.slicesByPool, n.metadata.name ?? '')) sliceRunner.enqueue(s.metadata.name ?? '');
    });
    namespaces.informer.on(ev, (ns: KubeObject) => {
      for (const n of nodeDevices.byIndex(UsbIndex.nodeDevicesByNamespace, ns.metadata.name ?? '')) nodeRunner.enqueue(n.metadata.name ?? '');
    });
    templates.informer.on(ev, (t: ResourceClaimTemplate) => {
      const owner = t.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'USBDevice');
      if (owner !== undefined) usbRunner.enqueue(objectKey({ namespace: t.metadata.namespace, name: owner.name }));
    });
  }

  if (vm !== undefined && claims !== undefined) wireVmSide(vm, { usbDevices, templates, claims }, usbRunner);

  const caches = [slices, nodeDevices, usbDevices, namespaces, templates, ...(claims ? [claims] : []), ...(ownNodes ? [ownNodes] : [])];
  for (const c of caches) c.informer.start();
  const synced = Promise.all([...caches, nodes].map((c) => c.synced)).then(() => {
    if (signal.aborted) return;
    for (const r of [sliceRunner, nodeRunner, usbRunner]) r.start();
    log.info('USB reconcilers running');
  });
  synced.catch(() => undefined);
  const vmPort: VmUsbPort | undefined =
    vm === undefined || claims === undefined
      ? undefined
      : {
          usbDevices,
          templates,
          claims,
          claimClient: kube.resource(resourceClaimDescriptor, ResourceClaimSchema, FIELD_MANAGER),
          hotplug: vm.hotplug,
        };
  return {
    deps,
    vmPort,
    synced,
    stop: async () => {
      await Promise.all([sliceRunner, nodeRunner, usbRunner].map((r) => r.stop()));
      await Promise.all(caches.map((c) => c.informer.stop()));
    },
  };
}

/** VMs wake on their USBDevices, templates and claims; USBDevices on the VMs that name them. */
function wireVmSide(
  vm: UsbVmSide,
  c: { usbDevices: ObjectCache<USBDevice>; templates: ObjectCache<ResourceClaimTemplate>; claims: ObjectCache<ResourceClaim> },
  usbRunner: Runner,
): void {
  const vmsNaming = (ns: string, device: string): void => {
    for (const v of vm.vms.byIndex(VMIndex.byUsbDevice, `${ns}/${device}`)) vm.enqueueVM(objectKey(v.metadata));
  };
  for (const ev of ['add', 'update', 'delete'] as const) {
    c.usbDevices.informer.on(ev, (u: USBDevice) => vmsNaming(u.metadata.namespace ?? '', u.metadata.name ?? ''));
    c.templates.informer.on(ev, (t: ResourceClaimTemplate) => {
      const owner = t.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'USBDevice');
      if (owner !== undefined) vmsNaming(t.metadata.namespace ?? '', owner.name);
    });
    c.claims.informer.on(ev, (claim: ResourceClaim) => {
      const device = claim.metadata.labels?.[USB_DEVICE_LABEL];
      if (device !== undefined) vmsNaming(claim.metadata.namespace ?? '', device);
      const owner = claim.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'VirtualMachine');
      if (owner !== undefined) vm.enqueueVM(objectKey({ namespace: claim.metadata.namespace, name: owner.name }));
    });
    // A VM's devices follow it (Attached, its node's USB/IP ports); other VMs naming the same device wait for it to let go.
    vm.vms.informer.on(ev, (v: VirtualMachine, old?: VirtualMachine) => {
      const same =
        old !== undefined &&
        deepEqual(old.spec.usbDevices, v.spec.usbDevices) &&
        deepEqual(old.status?.usbDevices, v.status?.usbDevices) &&
        old.status?.nodeName === v.status?.nodeName;
      if (ev === 'update' && same) return;
      const ns = v.metadata.namespace ?? '';
      const names = new Set([...(v.spec.usbDevices ?? []), ...(v.status?.usbDevices ?? []), ...(old?.status?.usbDevices ?? [])].map((d) => d.name));
      for (const n of names) {
        usbRunner.enqueue(`${ns}/${n}`);
        for (const other of vm.vms.byIndex(VMIndex.byUsbDevice, `${ns}/${n}`))
          if (other.metadata.uid !== v.metadata.uid) vm.enqueueVM(objectKey(other.metadata));
      }
    });
  }
}
