/**
 * Pure: what a VM's `spec.usbDevices` need (the original's USBDeviceAttach/Detach handlers). For each
 * device named in the spec, from the USBDevice in the VM's namespace, its ResourceClaimTemplate, the
 * ResourceClaim that reserves it and the instance's host-device status: the status.usbDevices entry,
 * why it is not usable (if so) and what to do (reserve and attach, or detach and release). Entries of
 * the status no longer in the spec are detached and released.
 */
import { USBDeviceCondition } from '../../../../shared/api/conditions/index.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { USBDevice } from '../../../../shared/api/resources/usb.js';
import { findCondition } from '../../engine/conditions.js';

export type UsbStatus = NonNullable<NonNullable<VirtualMachine['status']>['usbDevices']>[number];

/** The claim that reserves a USBDevice for one VM; named after the device, so two VMs cannot both hold one. */
export const usbClaimName = (device: string): string => `${device}-claim`;
export const usbTemplateName = (device: string): string => `${device}-template`;
export const usbRequestName = (device: string): string => `req-${device}`;
/** Label on the claims the controller makes: the USBDevice they reserve. */
export const USB_DEVICE_LABEL = 'virtualization.deckhouse.io/usb-device';

/** What is known about one device of the spec. */
export interface UsbView {
  readonly name: string;
  readonly device: USBDevice | undefined;
  readonly templateExists: boolean;
  /** The VM holding the device's claim, when it is another one (`namespace/name`). */
  readonly claimedBy: string | undefined;
  /** Another VM that reports the device attached (`namespace/name`). */
  readonly attachedTo: string | undefined;
  /** The instance's host device of this name: phase and `bus:port` address. */
  readonly host: { phase?: string | undefined; address?: string | undefined } | undefined;
  /**
   * A device of another node that the VM's node cannot import now (usbipPortFree of that node: `full`,
   * or `unknown` when it advertises no USB/IP ports); undefined when it can, or need not.
   */
  readonly usbip?: { readonly node: string; readonly verdict: 'full' | 'unknown' } | undefined;
}

export type UsbAction = 'attach' | 'detach' | 'none';

export interface UsbDecision {
  readonly entry: UsbStatus;
  /** Why the device cannot be used by this VM now (for the USBDeviceReady message), if so. */
  readonly problem: string | undefined;
  /** attach: reserve (claim) and addresourceclaim; detach: removeresourceclaim and release the claim. */
  readonly action: UsbAction;
  /** Waiting for a free USB/IP port on the VM's node (looked at again after a while). */
  readonly portBlocked?: true;
}

/** Ready as the original counts it: Ready=True, vendor and product known, a node. */
export function usbDeviceReady(device: USBDevice): boolean {
  const a = device.status?.attributes;
  if (!a?.vendorID || !a.productID || !device.status?.nodeName) return false;
  return findCondition(device.status.conditions, USBDeviceCondition.Ready.type)?.status === 'True';
}

/** `bus:port` as KubeVirt reports a USB host device address; anything else is no address. */
export function parseUsbAddress(address: string | undefined): { bus: number; port: number } | undefined {
  const m = /^\s*(\d{1,9})\s*:\s*(\d{1,9})\s*$/.exec(address ?? '');
  return m === null ? undefined : { bus: Number(m[1]), port: Number(m[2]) };
}

/** One device of the spec, for a VM whose instance runs (`running`) or not. */
export function decideUsb(view: UsbView, previous: UsbStatus | undefined, running: boolean, namespace: string): UsbDecision {
  const { name, device } = view;
  const wasAttached = previous?.attached === true || view.host !== undefined;
  const detached = (ready: boolean, problem: string | undefined, release: boolean): UsbDecision => ({
    entry: { name, attached: false, ready },
    problem,
    action: release && wasAttached ? 'detach' : 'none',
  });
  if (device === undefined) return detached(false, `USB device '${name}' not found in namespace ${namespace}`, true);
  if (device.metadata.deletionTimestamp !== undefined) return detached(false, `USB device '${name}' is being deleted`, true);
  if (!usbDeviceReady(device)) {
    const why = findCondition(device.status?.conditions, USBDeviceCondition.Ready.type)?.message;
    return detached(false, `USB device '${name}' is not ready${why ? `: ${why}` : ''}`, true);
  }
  const holder = view.claimedBy ?? view.attachedTo;
  if (holder !== undefined) return detached(true, `USB device '${name}' is in use by VirtualMachine ${holder}`, false);
  if (!view.templateExists) return detached(true, `USB device '${name}' has no ResourceClaimTemplate ${usbTemplateName(name)} yet`, true);
  if (!running) return detached(true, undefined, false);
  if (view.usbip !== undefined && view.host === undefined) {
    const why =
      view.usbip.verdict === 'full'
        ? `no free USB/IP port on node ${view.usbip.node}`
        : `node ${view.usbip.node} advertises no USB/IP ports (the device is on node ${device.status?.nodeName ?? ''})`;
    return { ...detached(true, `USB device '${name}' cannot be attached: ${why}`, false), portBlocked: true };
  }
  if (view.host?.phase === 'Ready') {
    const address = parseUsbAddress(view.host.address);
    return { entry: { name, attached: true, ready: true, ...(address ? { address } : {}), hotplugged: true }, problem: undefined, action: 'none' };
  }
  return { entry: { name, attached: false, ready: true }, problem: undefined, action: 'attach' };
}

/** The USBDeviceReady condition for the decisions of a pass and the calls that failed in it (none of either: no condition). */
export function usbReadyCondition(
  decisions: readonly UsbDecision[],
  failed: readonly string[] = [],
): { status: 'True' | 'False'; reason: 'USBDeviceReady' | 'SomeDevicesNotReady'; message: string } | undefined {
  if (decisions.length === 0 && failed.length === 0) return undefined;
  const problems = [...decisions.map((d) => d.problem).filter((p): p is string => p !== undefined), ...failed];
  if (problems.length === 0) return { status: 'True', reason: 'USBDeviceReady', message: 'All USB devices are ready' };
  return { status: 'False', reason: 'SomeDevicesNotReady', message: problems.join('; ') };
}
