/**
 * NodeUSBDevice (facts §3.3): finalizer and auto-delete, Ready, Assigned → USBDevice, Attached, with
 * the original's conditions, reasons and messages.
 */
import { NodeUSBDeviceCondition as N } from '../../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../../shared/api/finalizers.js';
import type { NodeUSBDevice } from '../../../../../shared/api/resources/usb.js';
import { hasFinalizer } from '../../../../../shared/kube/index.js';
import { conditionOn, findCondition } from '../../../engine/conditions.js';
import { clone, handlerChain, type Handler, type HandlerContext, type HandlerOutcome, type ReconcileState } from '../../../engine/reconciler.js';
import type { ReconcileFn } from '../../../engine/runner.js';
import { protectionHandler } from '../../protection.js';
import { sameAttributes, usbDevicesOf } from '../attributes.js';
import { UsbIndex, type UsbDeps, ownerRef, ignoreNotFound, ignoreExists, namespaceInScope, observed } from '../deps.js';

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
  // Deleting removes the USBDevices it made; their own finalizers wait for the VMs.
  const protection = protectionHandler({
    name: 'deletion',
    finalizer: Finalizer.nodeUSBDeviceCleanup,
    client: deps.clients.nodeDevices,
    cache: deps.caches.nodeDevices,
    release: async (s: NState, ctx) => {
      const nusb = s.obj;
      for (const usb of deps.caches.usbDevices.byIndex(UsbIndex.usbDevicesByName, nusb.metadata.name ?? '')) {
        if (usb.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === nusb.metadata.uid)) {
          await deps.clients.usbDevices
            .delete({ namespace: usb.metadata.namespace, name: usb.metadata.name ?? '' }, { signal: ctx.signal })
            .catch(ignoreNotFound);
        }
      }
    },
  });
  return {
    name: 'deletion',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const nusb = s.obj;
      if (nusb.metadata.deletionTimestamp !== undefined || !hasFinalizer(nusb, Finalizer.nodeUSBDeviceCleanup)) return protection.handle(s, ctx);
      // Unplugged: seen on a node (nodeName is set by the slice reconciler right after create) and
      // absent from its slices now; looked up afresh, not from the last pass's Ready condition.
      const unplugged = (nusb.status?.nodeName ?? '') !== '' && !presentOnNode(deps, nusb);
      if (nusb.spec.assignedNamespace === '' && unplugged) {
        ctx.log.info('unplugged and unassigned: deleting the NodeUSBDevice');
        await deps.clients.nodeDevices.delete({ name: nusb.metadata.name ?? '' }, { signal: ctx.signal }).catch(ignoreNotFound);
        s.gone = true;
        return { stop: true };
      }
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
