/**
 * The three USB reconcilers of the original (facts §3.2-3.4): ResourceSlice → NodeUSBDevice
 * (discovery), NodeUSBDevice (finalizer and auto-delete, Ready, Assigned → USBDevice, Attached) and
 * USBDevice (finalizer, Ready mirrored, ResourceClaimTemplate, Attached), with the original's
 * conditions, reasons and messages.
 */
import { NodeUSBDeviceCondition as N, USBDeviceCondition as U } from '../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../shared/api/finalizers.js';
import type { NodeUSBDevice, USBDevice } from '../../../../shared/api/resources/usb.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import { VMIndex } from '../vm/state.js';
import { usbipPortFree } from '../../../../shared/api/usbip.js';
import { AlreadyExistsError, NotFoundError } from '../../../../shared/errors/index.js';
import {
  addFinalizer,
  hasFinalizer,
  labelsMatchingAs,
  ownerReferenceTo,
  removeFinalizer,
  type KubeObject,
  type ResourcePort,
  objectKey,
} from '../../../../shared/kube/index.js';
import type { Scope } from '../../caches.js';
import type { ResourceClaimTemplate, ResourceSlice } from '../../../../shared/api/k8s/resource.js';
import type { CachePort } from '../../deps.js';
import type { Node } from '../../kube/resources.js';
import { conditionOn, findCondition } from '../../engine/conditions.js';
import { clone, handlerChain, type Handler, type HandlerContext, type HandlerOutcome, type ReconcileState } from '../../engine/reconciler.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { attributesOf, claimTemplateSpec, CLAIM_SPEC_HASH_ANNOTATION, nodeUSBDeviceName, sameAttributes, specHash, usbDevicesOf } from './attributes.js';

export const UsbIndex = { slicesByPool: 'pool', usbDevicesByName: 'name', nodeDevicesByNamespace: 'assignedNamespace' } as const;

export interface UsbDeps {
  caches: {
    slices: CachePort<ResourceSlice>;
    nodeDevices: CachePort<NodeUSBDevice>;
    usbDevices: CachePort<USBDevice>;
    namespaces: CachePort<KubeObject>;
    templates: CachePort<ResourceClaimTemplate>;
    /** The controller's VMs (absent when these reconcilers run alone): Attached and deletion follow them. */
    vms?: CachePort<VirtualMachine>;
    /** Nodes in the cluster scope: whose slices are ours, and their USB/IP port annotations. */
    nodes: CachePort<Node>;
  };
  /** The controller's scopes (`scopesOf(config)`); the caches above are already limited to them. */
  scopes: { namespaced: Scope; clusterScoped: Scope };
  clients: {
    nodeDevices: ResourcePort<NodeUSBDevice>;
    usbDevices: ResourcePort<USBDevice>;
    templates: ResourcePort<ResourceClaimTemplate>;
  };
}

/** An ownerReference as a plain object (the zod metadata type wants one). */
const ownerRef = (owner: KubeObject, opts?: Parameters<typeof ownerReferenceTo>[1]): Record<string, unknown> & ReturnType<typeof ownerReferenceTo> => ({
  ...ownerReferenceTo(owner, opts),
});

const ignoreNotFound = (err: unknown): void => {
  if (!(err instanceof NotFoundError)) throw err;
};
const ignoreExists = (err: unknown): void => {
  if (!(err instanceof AlreadyExistsError)) throw err;
};

/** Whether a namespace is in the namespaced scope (WATCH_NAMESPACE, or any when unset). */
export function namespaceInScope(deps: Pick<UsbDeps, 'scopes'>, namespace: string): boolean {
  const watched = deps.scopes.namespaced.namespace;
  return watched === undefined || watched === namespace;
}

/**
 * ResourceSlice → NodeUSBDevice: create what is missing (owned by the slice), sync attributes. Only
 * the slices of a node in the cluster scope; their NodeUSBDevices carry the node's values of the
 * labels CLUSTER_OBJECTS_SELECTOR names, so they are in the same scope.
 */
export function resourceSliceReconciler(deps: UsbDeps): ReconcileFn {
  return async (key, signal) => {
    const slice = deps.caches.slices.get(key);
    if (slice === undefined) return;
    const node = deps.caches.nodes.get(slice.spec.pool.name);
    if (node === undefined) return;
    const selector = deps.scopes.clusterScoped.labelSelector;
    const labels = selector === undefined ? {} : labelsMatchingAs(selector, node.metadata.labels);
    for (const device of usbDevicesOf(slice)) {
      const attributes = attributesOf(device, slice.spec.pool.name);
      const name = nodeUSBDeviceName(attributes.name ?? device.name);
      let nusb = deps.caches.nodeDevices.get(name);
      if (nusb === undefined) {
        const created = await deps.clients.nodeDevices
          .create(
            {
              apiVersion: 'virtualization.deckhouse.io/v1alpha2',
              kind: 'NodeUSBDevice',
              metadata: {
                name,
                ...(Object.keys(labels).length > 0 ? { labels } : {}),
                ownerReferences: [ownerRef({ ...slice, apiVersion: 'resource.k8s.io/v1', kind: 'ResourceSlice' })],
                // Made with its cleanup finalizer: no second write to add it.
                finalizers: [Finalizer.nodeUSBDeviceCleanup],
              },
              spec: { assignedNamespace: '' },
            },
            { signal },
          )
          .catch((err: unknown) => ignoreExists(err));
        if (created === undefined) continue;
        nusb = deps.caches.nodeDevices.remember(created);
      }
      if (!sameAttributes(nusb.status?.attributes, attributes) || nusb.status?.nodeName !== slice.spec.pool.name) {
        deps.caches.nodeDevices.remember(await deps.clients.nodeDevices.patchStatus({ name }, { attributes, nodeName: slice.spec.pool.name }, { signal }));
      }
    }
  };
}

type NStatus = NonNullable<NodeUSBDevice['status']>;
type NState = ReconcileState<NodeUSBDevice, NStatus>;

/**
 * Assigned to a namespace outside WATCH_NAMESPACE: another controller's (tests, dev); this one writes
 * nothing of it (its USBDevice, template and the NodeUSBDevice's status are that controller's).
 */
function nodeScope(deps: UsbDeps): Handler<NState> {
  return {
    name: 'scope',
    handle(s, ctx): HandlerOutcome | void {
      const ns = s.obj.spec.assignedNamespace;
      if (ns === '' || namespaceInScope(deps, ns)) return;
      ctx.log.debug({ namespace: ns }, 'assigned outside the watched namespace: left alone');
      return { stop: true };
    },
  };
}

function nodeDeletion(deps: UsbDeps): Handler<NState> {
  return {
    name: 'deletion',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const nusb = s.obj;
      const opts = { signal: ctx.signal };
      if (nusb.metadata.deletionTimestamp === undefined) {
        if (!hasFinalizer(nusb, Finalizer.nodeUSBDeviceCleanup)) {
          deps.caches.nodeDevices.remember(await addFinalizer(deps.clients.nodeDevices, nusb, Finalizer.nodeUSBDeviceCleanup, opts));
          return;
        }
        // Unplugged: seen on a node (nodeName is set by the slice reconciler right after create) and
        // absent from its slices now; looked up afresh, not from the last pass's Ready condition.
        const unplugged = (nusb.status?.nodeName ?? '') !== '' && !presentOnNode(deps, nusb);
        if (nusb.spec.assignedNamespace === '' && unplugged) {
          ctx.log.info('unplugged and unassigned: deleting the NodeUSBDevice');
          await deps.clients.nodeDevices.delete({ name: nusb.metadata.name ?? '' }, opts).catch(ignoreNotFound);
          s.gone = true;
          return { stop: true };
        }
        return;
      }
      for (const usb of deps.caches.usbDevices.byIndex(UsbIndex.usbDevicesByName, nusb.metadata.name ?? '')) {
        if (usb.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === nusb.metadata.uid)) {
          await deps.clients.usbDevices.delete({ namespace: usb.metadata.namespace, name: usb.metadata.name ?? '' }, opts).catch(ignoreNotFound);
        }
      }
      if (hasFinalizer(nusb, Finalizer.nodeUSBDeviceCleanup)) await removeFinalizer(deps.clients.nodeDevices, nusb, Finalizer.nodeUSBDeviceCleanup, opts);
      s.gone = true;
      return { stop: true };
    },
  };
}

/** Whether the device of a NodeUSBDevice is in a slice of its node's pool now. */
function presentOnNode(deps: UsbDeps, nusb: NodeUSBDevice): boolean {
  const node = nusb.status?.nodeName ?? '';
  const wanted = nusb.status?.attributes?.name || nusb.metadata.name;
  return node !== '' && deps.caches.slices.byIndex(UsbIndex.slicesByPool, node).some((sl) => usbDevicesOf(sl).some((d) => d.name === wanted));
}

function nodeReady(deps: UsbDeps): Handler<NState> {
  return {
    name: 'ready',
    handle(s, ctx): void {
      conditionOn(
        s,
        ctx,
        presentOnNode(deps, s.obj)
          ? { type: N.Ready.type, status: 'True', reason: N.Ready.reason.Ready, message: 'Device is ready to use.' }
          : { type: N.Ready.type, status: 'False', reason: N.Ready.reason.NotFound, message: 'Device is absent on the host.' },
      );
    },
  };
}

async function deleteUsbDevices(deps: UsbDeps, name: string, keep: string | undefined, ctx: HandlerContext): Promise<void> {
  for (const usb of deps.caches.usbDevices.byIndex(UsbIndex.usbDevicesByName, name)) {
    if (usb.metadata.namespace === keep) continue;
    await deps.clients.usbDevices.delete({ namespace: usb.metadata.namespace, name }, { signal: ctx.signal }).catch(ignoreNotFound);
  }
}

function nodeAssigned(deps: UsbDeps): Handler<NState> {
  return {
    name: 'assigned',
    async handle(s, ctx): Promise<void> {
      const nusb = s.obj;
      const name = nusb.metadata.name ?? '';
      const ns = nusb.spec.assignedNamespace;
      if (findCondition(s.status.conditions, N.Ready.type)?.reason === N.Ready.reason.NotFound) {
        await deleteUsbDevices(deps, name, undefined, ctx);
        conditionOn(s, ctx, {
          type: N.Assigned.type,
          status: 'False',
          reason: N.Assigned.reason.InProgress,
          message: 'Device is absent on the host, USBDevice is removed.',
        });
        return;
      }
      if (ns === '') {
        await deleteUsbDevices(deps, name, undefined, ctx);
        conditionOn(s, ctx, {
          type: N.Assigned.type,
          status: 'False',
          reason: N.Assigned.reason.Available,
          message: 'No namespace is assigned for the device.',
        });
        return;
      }
      await deleteUsbDevices(deps, name, ns, ctx);
      if (deps.caches.namespaces.get(ns) === undefined) {
        conditionOn(s, ctx, { type: N.Assigned.type, status: 'False', reason: N.Assigned.reason.Available, message: `Namespace ${ns} does not exist.` });
        return;
      }
      const status = { attributes: s.status.attributes, nodeName: s.status.nodeName };
      let usb = deps.caches.usbDevices.get(`${ns}/${name}`);
      if (usb === undefined) {
        const owner = ownerRef(
          { ...nusb, apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'NodeUSBDevice' },
          { controller: true, blockOwnerDeletion: true },
        );
        const created = await deps.clients.usbDevices
          .create(
            {
              apiVersion: 'virtualization.deckhouse.io/v1alpha2',
              kind: 'USBDevice',
              // Made with its cleanup finalizer: no second write to add it.
              metadata: { namespace: ns, name, ownerReferences: [owner], finalizers: [Finalizer.usbDeviceCleanup] },
            },
            { signal: ctx.signal },
          )
          .catch((err: unknown) => ignoreExists(err));
        usb = created === undefined ? undefined : deps.caches.usbDevices.remember(created);
      }
      if (
        usb !== undefined &&
        status.attributes !== undefined &&
        (!sameAttributes(usb.status?.attributes, status.attributes) || usb.status?.nodeName !== status.nodeName)
      ) {
        deps.caches.usbDevices.remember(await deps.clients.usbDevices.patchStatus({ namespace: ns, name }, status, { signal: ctx.signal }));
      }
      conditionOn(s, ctx, {
        type: N.Assigned.type,
        status: 'True',
        reason: N.Assigned.reason.Assigned,
        message: `The device is assigned to namespace "${ns}", and the corresponding USBDevice has been created.`,
      });
    },
  };
}

function nodeAttached(deps: UsbDeps): Handler<NState> {
  return {
    name: 'attached',
    handle(s, ctx): void {
      const ns = s.obj.spec.assignedNamespace;
      const A = N.Attached;
      if (ns === '') {
        conditionOn(s, ctx, {
          type: A.type,
          status: 'False',
          reason: A.reason.Available,
          message: 'Device is not assigned to any namespace and is not attached to a virtual machine.',
        });
        return;
      }
      const usb = deps.caches.usbDevices.get(`${ns}/${s.obj.metadata.name ?? ''}`);
      const mirrored = findCondition(usb?.status?.conditions, A.type);
      if (usb === undefined)
        conditionOn(s, ctx, {
          type: A.type,
          status: 'False',
          reason: A.reason.Available,
          message: `Corresponding USBDevice ${ns}/${s.obj.metadata.name ?? ''} not found.`,
        });
      else if (mirrored === undefined)
        conditionOn(s, ctx, { type: A.type, status: 'False', reason: A.reason.Available, message: 'Waiting for the attachment status...' });
      else {
        const reason = (Object.values(A.reason) as string[]).includes(mirrored.reason) ? mirrored.reason : A.reason.Available;
        conditionOn(s, ctx, { type: A.type, status: mirrored.status, reason, message: mirrored.message });
      }
    },
  };
}

export function nodeUSBDeviceReconciler(deps: UsbDeps): ReconcileFn {
  return handlerChain<NodeUSBDevice, NStatus, NState>({
    name: 'nodeusbdevice',
    load: (key) => deps.caches.nodeDevices.get(key),
    invalid: (key) => deps.caches.nodeDevices.invalid(key),
    init: (obj) => ({ obj, status: clone(obj.status) ?? {} }),
    handlers: [nodeScope(deps), nodeDeletion(deps), nodeReady(deps), nodeAssigned(deps), nodeAttached(deps), observed()],
    statusOf: (obj) => obj.status,
    writeStatus: async (obj, patch, signal) => {
      deps.caches.nodeDevices.remember(await deps.clients.nodeDevices.patchStatus({ name: obj.metadata.name ?? '' }, patch, { signal }));
    },
  });
}

type UStatus = NonNullable<USBDevice['status']>;
type UState = ReconcileState<USBDevice, UStatus>;

function observed<S extends { obj: KubeObject; status: { observedGeneration?: number | undefined } }>(): Handler<S> {
  return {
    name: 'observed',
    handle(s): void {
      if (s.obj.metadata.generation !== undefined) s.status.observedGeneration = s.obj.metadata.generation;
    },
  };
}

function usbDeletion(deps: UsbDeps): Handler<UState> {
  return {
    name: 'deletion',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const opts = { signal: ctx.signal };
      if (s.obj.metadata.deletionTimestamp === undefined) {
        if (!hasFinalizer(s.obj, Finalizer.usbDeviceCleanup))
          deps.caches.usbDevices.remember(await addFinalizer(deps.clients.usbDevices, s.obj, Finalizer.usbDeviceCleanup, opts));
        return;
      }
      // VMs detach a deleted device themselves (removeresourceclaim); the finalizer waits for them.
      const holders = vmsOf(deps, s.obj).filter((v) => attachedIn(v, s.obj.metadata.name ?? ''));
      if (holders.length > 0) {
        ctx.log.info({ vms: holders.map((v) => v.metadata.name) }, 'waiting for VMs to detach the device');
        return { stop: true, requeueAfterMs: 1000 };
      }
      if (hasFinalizer(s.obj, Finalizer.usbDeviceCleanup)) await removeFinalizer(deps.clients.usbDevices, s.obj, Finalizer.usbDeviceCleanup, opts);
      s.gone = true;
      return { stop: true };
    },
  };
}

function usbReady(deps: UsbDeps): Handler<UState> {
  return {
    name: 'ready',
    handle(s, ctx): void {
      const nusb = deps.caches.nodeDevices.get(s.obj.metadata.name ?? '');
      if (nusb === undefined) {
        conditionOn(s, ctx, {
          type: U.Ready.type,
          status: 'False',
          reason: U.Ready.reason.NotFound,
          message: 'The USB device is no longer present on its node.',
        });
        return;
      }
      if (nusb.status?.attributes !== undefined) s.status.attributes = clone(nusb.status.attributes);
      if (nusb.status?.nodeName !== undefined) s.status.nodeName = nusb.status.nodeName;
      const ready = findCondition(nusb.status?.conditions, N.Ready.type);
      if (ready === undefined) {
        conditionOn(s, ctx, {
          type: U.Ready.type,
          status: 'False',
          reason: U.Ready.reason.NotReady,
          message: 'Waiting for the NodeUSBDevice to become ready.',
        });
        return;
      }
      const known = ready.reason === U.Ready.reason.Ready || ready.reason === U.Ready.reason.NotFound || ready.reason === U.Ready.reason.NotReady;
      const reason = known ? ready.reason : U.Ready.reason.NotReady;
      conditionOn(s, ctx, { type: U.Ready.type, status: reason === U.Ready.reason.Ready ? 'True' : 'False', reason, message: ready.message });
    },
  };
}

function claimTemplate(deps: UsbDeps): Handler<UState> {
  return {
    name: 'claim-template',
    async handle(s, ctx): Promise<void> {
      const attrName = s.status.attributes?.name;
      if (!attrName) return;
      const ns = s.obj.metadata.namespace ?? '';
      const name = `${s.obj.metadata.name ?? ''}-template`;
      const spec = claimTemplateSpec(s.obj.metadata.name ?? '', attrName);
      const hash = specHash(spec);
      const current = deps.caches.templates.get(`${ns}/${name}`);
      if (current !== undefined) {
        const currentHash = current.metadata.annotations?.[CLAIM_SPEC_HASH_ANNOTATION];
        const same = currentHash !== undefined ? currentHash === hash : specHash(current.spec) === hash;
        if (same) return;
        // Templates are immutable: delete and create again.
        ctx.log.info({ template: name }, 'ResourceClaimTemplate drifted: re-creating it');
        await deps.clients.templates.delete({ namespace: ns, name }, { signal: ctx.signal }).catch(ignoreNotFound);
      }
      const owner = ownerRef(
        { ...s.obj, apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'USBDevice' },
        { controller: true, blockOwnerDeletion: true },
      );
      const created = await deps.clients.templates
        .create(
          {
            apiVersion: 'resource.k8s.io/v1',
            kind: 'ResourceClaimTemplate',
            metadata: { namespace: ns, name, ownerReferences: [owner], annotations: { [CLAIM_SPEC_HASH_ANNOTATION]: hash } },
            spec,
          },
          { signal: ctx.signal },
        )
        .catch((err: unknown) => ignoreExists(err));
      if (created !== undefined) deps.caches.templates.remember(created);
    },
  };
}

/** VMs in the device's namespace that name it in their spec or status. */
function vmsOf(deps: UsbDeps, usb: USBDevice): VirtualMachine[] {
  return deps.caches.vms?.byIndex(VMIndex.byUsbDevice, objectKey(usb.metadata)) ?? [];
}

const attachedIn = (vm: VirtualMachine, name: string): boolean => vm.status?.usbDevices?.some((e) => e.name === name && e.attached) ?? false;

/** The first VM naming the device that runs on another node with no free vhci port for it: [vm, node]. */
function noPortFor(deps: UsbDeps, usb: USBDevice, vms: readonly VirtualMachine[]): [string, string] | undefined {
  const name = usb.metadata.name ?? '';
  const deviceNode = usb.status?.nodeName ?? '';
  for (const v of vms) {
    const node = v.status?.nodeName ?? '';
    if (node === '' || deviceNode === '' || node === deviceNode || !v.spec.usbDevices?.some((d) => d.name === name)) continue;
    if (usbipPortFree(deps.caches.nodes.get(node)?.metadata.annotations, usb.status?.attributes?.speed) === 'full') {
      return [objectKey(v.metadata), node];
    }
  }
  return undefined;
}

function usbAttached(deps: UsbDeps): Handler<UState> {
  return {
    name: 'attached',
    handle(s, ctx): void {
      const name = s.obj.metadata.name ?? '';
      const vms = vmsOf(deps, s.obj);
      const attached = vms.filter((v) => attachedIn(v, name)).map((v) => objectKey(v.metadata));
      const A = U.Attached;
      if (attached.length > 0) {
        const message =
          attached.length === 1 ? `Device is attached to VirtualMachine ${attached[0]}.` : `Device is attached to ${attached.length} VirtualMachines.`;
        conditionOn(s, ctx, { type: A.type, status: 'True', reason: A.reason.AttachedToVirtualMachine, message });
      } else if (noPortFor(deps, s.obj, vms) !== undefined) {
        const [vm, node] = noPortFor(deps, s.obj, vms) ?? [];
        conditionOn(s, ctx, {
          type: A.type,
          status: 'False',
          reason: A.reason.NoFreeUSBIPPort,
          message: `Device is requested by VirtualMachine ${vm ?? ''}, but node ${node ?? ''} has no free USB/IP port.`,
        });
      } else if (vms.some((v) => v.spec.usbDevices?.some((d) => d.name === name))) {
        conditionOn(s, ctx, {
          type: A.type,
          status: 'False',
          reason: A.reason.Available,
          message: 'Device is requested by a virtual machine but not attached yet.',
        });
      } else {
        conditionOn(s, ctx, { type: A.type, status: 'False', reason: A.reason.Available, message: 'Device is available for attachment to a virtual machine.' });
      }
    },
  };
}

export function usbDeviceReconciler(deps: UsbDeps): ReconcileFn {
  return handlerChain<USBDevice, UStatus, UState>({
    name: 'usbdevice',
    load: (key) => deps.caches.usbDevices.get(key),
    invalid: (key) => deps.caches.usbDevices.invalid(key),
    init: (obj) => ({ obj, status: clone(obj.status) ?? {} }),
    handlers: [usbDeletion(deps), usbReady(deps), claimTemplate(deps), usbAttached(deps), observed()],
    statusOf: (obj) => obj.status,
    writeStatus: async (obj, patch, signal) => {
      deps.caches.usbDevices.remember(
        await deps.clients.usbDevices.patchStatus({ namespace: obj.metadata.namespace, name: obj.metadata.name ?? '' }, patch, { signal }),
      );
    },
  });
}
