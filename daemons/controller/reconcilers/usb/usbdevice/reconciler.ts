/**
 * USBDevice (facts §3.4): finalizer, Ready mirrored from its NodeUSBDevice, ResourceClaimTemplate,
 * Attached, with the original's conditions, reasons and messages.
 */
import { NodeUSBDeviceCondition as N, USBDeviceCondition as U } from '../../../../../shared/api/conditions/index.js';
import { Finalizer } from '../../../../../shared/api/finalizers.js';
import type { USBDevice } from '../../../../../shared/api/resources/usb.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { VMIndex } from '../../vm/state.js';
import { usbipPortFree } from '../../../../../shared/api/usbip.js';
import { objectKey } from '../../../../../shared/kube/index.js';
import { conditionOn, findCondition } from '../../../engine/conditions.js';
import { clone, handlerChain, type Handler, type ReconcileState } from '../../../engine/reconciler.js';
import type { ReconcileFn } from '../../../engine/runner.js';
import { protectionHandler } from '../../protection.js';
import { claimTemplateSpec, CLAIM_SPEC_HASH_ANNOTATION, specHash } from '../attributes.js';
import { type UsbDeps, ownerRef, ignoreNotFound, ignoreExists, observed } from '../deps.js';

type UStatus = NonNullable<USBDevice['status']>;
type UState = ReconcileState<USBDevice, UStatus>;

function usbDeletion(deps: UsbDeps): Handler<UState> {
  return protectionHandler({
    name: 'deletion',
    finalizer: Finalizer.usbDeviceCleanup,
    client: deps.clients.usbDevices,
    cache: deps.caches.usbDevices,
    // VMs detach a deleted device themselves (removeresourceclaim); the finalizer waits for them.
    heldBy: (s: UState, ctx) => {
      const holders = vmsOf(deps, s.obj).filter((v) => attachedIn(v, s.obj.metadata.name ?? ''));
      if (holders.length > 0) ctx.log.info({ vms: holders.map((v) => v.metadata.name) }, 'waiting for VMs to detach the device');
      return holders.length > 0;
    },
    heldRecheckMs: 1000,
  });
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
