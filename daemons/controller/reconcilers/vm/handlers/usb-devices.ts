import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import type { ResourceClaim } from '../../../../../shared/api/k8s/resource.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { usbipPortFree } from '../../../../../shared/api/usbip.js';
import { AlreadyExistsError, NotFoundError, errorMessage } from '../../../../../shared/errors/index.js';
import { controllerRefOf, ownerReferenceTo } from '../../../../../shared/kube/index.js';
import type { Deps, VmUsbPort } from '../../../deps.js';
import type { Expectations } from '../../../engine/expectations.js';
import type { Handler, HandlerContext, HandlerOutcome } from '../../../engine/reconciler.js';
import { condition, dropCondition, VMIndex, type VMState } from '../state.js';
import {
  decideUsb,
  usbClaimName,
  usbReadyCondition,
  usbRequestName,
  usbTemplateName,
  USB_DEVICE_LABEL,
  type UsbDecision,
  type UsbStatus,
  type UsbView,
} from '../usb.js';

const C = VMCondition.USBDeviceReady;
/** How long an addresourceclaim sent for an instance is waited for before it is sent again. */
export const USB_ATTACH_RETRY_MS = 30_000;
/** How soon a device waiting for a free USB/IP port on the VM's node is looked at again. */
const USBIP_PORT_RECHECK_MS = 5_000;
/** How soon a failed addresourceclaim / removeresourceclaim is tried again (the original: 5 s). */
const USB_FAILURE_RETRY_MS = 5_000;

const ignoreNotFound = (err: unknown): void => {
  if (!(err instanceof NotFoundError)) throw err;
};

/**
 * A VM's `spec.usbDevices`: each device reserved for the VM by a ResourceClaim made from its
 * USBDevice's ResourceClaimTemplate and hot-plugged with addresourceclaim while the instance runs;
 * devices dropped from the spec, gone or not ready are detached (removeresourceclaim) and their claim
 * released. Reports status.usbDevices and USBDeviceReady. Without the USB reconcilers (no
 * resource.k8s.io/v1, USB_RECONCILERS off) nothing is touched.
 */
export function usbDevicesHandler(deps: Deps, requested: Expectations<true>): Handler<VMState> {
  return {
    name: 'usbDevices',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const usb = deps.usb.get();
      const vm = s.obj;
      if (usb === undefined || vm.metadata.deletionTimestamp !== undefined) return;
      const names = [...new Set((vm.spec.usbDevices ?? []).map((d) => d.name))];
      const instance = runningInstance(s);
      const decisions = decideAll(deps, usb, s, names, instance);
      // A failing call fails its device only (named in the condition, looked at again soon), never the others.
      const failed: string[] = [];
      const attempt = async (name: string, call: string, fn: () => Promise<void>): Promise<boolean> => {
        try {
          await fn();
          return true;
        } catch (err: unknown) {
          if (ctx.signal.aborted) throw err;
          ctx.log.warn({ usbDevice: name, err: errorMessage(err) }, `${call} failed`);
          failed.push(`USB device '${name}': ${call} failed: ${errorMessage(err)}`);
          return false;
        }
      };
      for (const d of decisions) {
        const name = d.entry.name;
        if (d.action === 'attach') await attempt(name, 'addresourceclaim', () => attach(usb, vm, name, instance?.metadata.uid ?? '', requested, ctx));
        if (d.action === 'detach') await attempt(name, 'removeresourceclaim', () => detach(usb, vm, name, ctx));
      }
      // Dropped from the spec: detached and released; one whose detach failed stays listed, to be tried again.
      const kept: UsbStatus[] = [];
      for (const entry of s.status.usbDevices ?? []) {
        if (!names.includes(entry.name) && !(await attempt(entry.name, 'removeresourceclaim', () => detach(usb, vm, entry.name, ctx)))) kept.push(entry);
      }
      await releaseUnnamed(usb, vm, [...names, ...kept.map((e) => e.name)], ctx);
      report(s, ctx, decisions, kept, failed);
      if (failed.length > 0) return { requeueAfterMs: USB_FAILURE_RETRY_MS };
      // Node annotations are not watched for this: look again for a free USB/IP port, as the original.
      if (decisions.some((d) => d.portBlocked)) return { requeueAfterMs: USBIP_PORT_RECHECK_MS };
      // Waiting for KubeVirt: the instance's status brings it back; look again in case the request was lost.
      if (decisions.some((d) => d.action === 'attach')) return { requeueAfterMs: USB_ATTACH_RETRY_MS };
    },
  };
}

type Instance = NonNullable<VMState['kvvmi']>;

function runningInstance(s: VMState): Instance | undefined {
  const i = s.kvvmi;
  return i !== undefined && i.metadata.deletionTimestamp === undefined && i.status?.phase === 'Running' ? i : undefined;
}

function decideAll(deps: Deps, usb: VmUsbPort, s: VMState, names: readonly string[], instance: Instance | undefined): UsbDecision[] {
  const previous = new Map((s.status.usbDevices ?? []).map((e) => [e.name, e]));
  const hosts = new Map((instance?.status?.deviceStatus?.hostDeviceStatuses ?? []).map((h) => [h.name, h]));
  const ns = s.obj.metadata.namespace ?? '';
  const vmNode = instance?.status?.nodeName ?? '';
  return names.map((name) => decideUsb(viewOf(deps, usb, s.obj, name, hosts.get(name), vmNode), previous.get(name), instance !== undefined, ns));
}

/** Every claim this VM holds for a device it no longer names released. */
async function releaseUnnamed(usb: VmUsbPort, vm: VirtualMachine, names: readonly string[], ctx: HandlerContext): Promise<void> {
  for (const claim of usb.claims.byIndex(USB_CLAIMS_BY_VM, vm.metadata.uid ?? '')) {
    const device = claim.metadata.labels?.[USB_DEVICE_LABEL] ?? '';
    if (!names.includes(device)) await release(usb, vm, device, ctx);
  }
}

/** Index of the claims cache: the uid of the VM that controls a claim. */
export const USB_CLAIMS_BY_VM = 'usb-claims-by-vm';

function viewOf(deps: Deps, usb: VmUsbPort, vm: VirtualMachine, name: string, host: UsbView['host'], vmNode: string): UsbView {
  const ns = vm.metadata.namespace ?? '';
  const claim = usb.claims.get(`${ns}/${usbClaimName(name)}`);
  const device = usb.usbDevices.get(`${ns}/${name}`);
  const owner = claim === undefined ? undefined : controllerRefOf(claim);
  const claimedBy = owner !== undefined && owner.uid !== vm.metadata.uid && claim?.metadata.deletionTimestamp === undefined ? `${ns}/${owner.name}` : undefined;
  const other = deps.caches.vms
    .byIndex(VMIndex.byUsbDevice, `${ns}/${name}`)
    .find((o) => o.metadata.uid !== vm.metadata.uid && o.status?.usbDevices?.some((e) => e.name === name && e.attached));
  // A device of another node needs a vhci port on the VM's node, unless this VM already reserved it (in flight).
  const deviceNode = device?.status?.nodeName ?? '';
  const reserved = claim !== undefined && owner?.uid === vm.metadata.uid;
  const node = deviceNode !== '' && vmNode !== '' && deviceNode !== vmNode && !reserved ? deps.caches.nodes.get(vmNode) : undefined;
  const verdict = node === undefined ? 'free' : usbipPortFree(node.metadata.annotations, device?.status?.attributes?.speed);
  return {
    name,
    device,
    ...(verdict === 'free' ? {} : { usbip: { node: vmNode, verdict } }),
    templateExists: usb.templates.get(`${ns}/${usbTemplateName(name)}`) !== undefined,
    claimedBy,
    attachedTo: other === undefined ? undefined : `${ns}/${other.metadata.name ?? ''}`,
    host,
  };
}

/** Reserve the device with a claim made from its template, then ask KubeVirt once per instance (and again after a while). */
async function attach(
  usb: VmUsbPort,
  vm: VirtualMachine,
  name: string,
  instanceUid: string,
  requested: Expectations<true>,
  ctx: HandlerContext,
): Promise<void> {
  const ns = vm.metadata.namespace ?? '';
  if (usb.claims.get(`${ns}/${usbClaimName(name)}`) === undefined) {
    const template = usb.templates.get(`${ns}/${usbTemplateName(name)}`);
    if (template === undefined) return;
    const claim: ResourceClaim = {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaim',
      metadata: {
        namespace: ns,
        name: usbClaimName(name),
        labels: { ...template.spec.metadata?.labels, [USB_DEVICE_LABEL]: name },
        ...(template.spec.metadata?.annotations ? { annotations: { ...template.spec.metadata.annotations } } : {}),
        ownerReferences: [
          {
            ...ownerReferenceTo(
              { ...vm, apiVersion: 'virtualization.deckhouse.io/v1alpha2', kind: 'VirtualMachine' },
              { controller: true, blockOwnerDeletion: true },
            ),
          },
        ],
      },
      spec: structuredClone(template.spec.spec),
    };
    const created = await usb.claimClient.create(claim, { signal: ctx.signal }).catch((err: unknown) => {
      // Another VM took it in the same instant: its watch event brings this VM back with "in use".
      if (err instanceof AlreadyExistsError) return undefined;
      throw err;
    });
    if (created === undefined) return;
    usb.claims.remember(created);
    ctx.log.info({ usbDevice: name, claim: usbClaimName(name) }, 'USB device reserved by a ResourceClaim');
  }
  const key = `${ns}/${vm.metadata.name ?? ''}/${name}/${instanceUid}`;
  if (requested.get(key) !== undefined) return;
  await usb.hotplug.addResourceClaim(
    { namespace: ns, vm: vm.metadata.name ?? '', name, resourceClaimTemplateName: usbTemplateName(name), requestName: usbRequestName(name) },
    ctx.signal,
  );
  requested.set(key, true);
  ctx.log.info({ usbDevice: name }, 'addresourceclaim sent');
}

async function detach(usb: VmUsbPort, vm: VirtualMachine, name: string, ctx: HandlerContext): Promise<void> {
  const ns = vm.metadata.namespace ?? '';
  await usb.hotplug.removeResourceClaim({ namespace: ns, vm: vm.metadata.name ?? '', name }, ctx.signal).catch(ignoreNotFound);
  ctx.log.info({ usbDevice: name }, 'removeresourceclaim sent');
  await release(usb, vm, name, ctx);
}

/** A deleted VM lets go of every USB device it reserved (the garbage collector would too, later). */
export async function releaseUsbClaims(deps: Deps, vm: VirtualMachine, ctx: HandlerContext): Promise<void> {
  const usb = deps.usb.get();
  if (usb === undefined) return;
  for (const claim of usb.claims.byIndex(USB_CLAIMS_BY_VM, vm.metadata.uid ?? '')) {
    await release(usb, vm, claim.metadata.labels?.[USB_DEVICE_LABEL] ?? '', ctx);
  }
}

/** Delete the device's claim if this VM holds it. */
async function release(usb: VmUsbPort, vm: VirtualMachine, name: string, ctx: HandlerContext): Promise<void> {
  const ns = vm.metadata.namespace ?? '';
  const claim = usb.claims.get(`${ns}/${usbClaimName(name)}`);
  if (claim === undefined || controllerRefOf(claim)?.uid !== vm.metadata.uid || claim.metadata.deletionTimestamp !== undefined) return;
  await usb.claimClient.delete({ namespace: ns, name: usbClaimName(name) }, { signal: ctx.signal }).catch(ignoreNotFound);
  usb.claims.forget(`${ns}/${usbClaimName(name)}`);
}

function report(s: VMState, ctx: HandlerContext, decisions: readonly UsbDecision[], kept: readonly UsbStatus[], failed: readonly string[]): void {
  const entries: UsbStatus[] = [...decisions.map((d) => d.entry), ...kept];
  if (entries.length === 0) delete s.status.usbDevices;
  else s.status.usbDevices = entries;
  const c = usbReadyCondition(decisions, failed);
  if (c === undefined) dropCondition(s, C.type);
  else condition(s, ctx, { type: C.type, ...c });
}
