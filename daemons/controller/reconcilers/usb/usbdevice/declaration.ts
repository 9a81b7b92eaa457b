import type { ResourceClaimTemplate } from '../../../../../shared/api/k8s/resource.js';
import type { NodeUSBDevice, USBDevice } from '../../../../../shared/api/resources/usb.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { objectKey } from '../../../../../shared/kube/index.js';
import type { ReconcilerDeclaration } from '../../../declaration.js';
import { deepEqual } from '../../../engine/merge-diff.js';
import { UsbIndex } from '../deps.js';
import { usbParts } from '../parts.js';
import { usbDeviceReconciler } from './reconciler.js';

/** USBDevice: Ready, its ResourceClaimTemplate, Attached (key: namespace/name). */
export const usbDeviceDeclaration: ReconcilerDeclaration = {
  name: 'usbdevice',
  workers: () => 2,
  enabled: (f) => f.usb,
  late: true,
  caches: (w) => w.shared(usbParts).all,
  reconcile: (w) => usbDeviceReconciler(w.shared(usbParts).deps),
  sources(w, enqueue) {
    const { nodeDevices, usbDevices, templates } = w.shared(usbParts);
    for (const ev of ['add', 'update', 'delete'] as const) {
      nodeDevices.informer.on(ev, (n: NodeUSBDevice) => {
        if (n.spec.assignedNamespace) enqueue(objectKey({ namespace: n.spec.assignedNamespace, name: n.metadata.name }));
        for (const u of usbDevices.byIndex(UsbIndex.usbDevicesByName, n.metadata.name ?? '')) enqueue(objectKey(u.metadata));
      });
      usbDevices.informer.on(ev, (u: USBDevice) => enqueue(objectKey(u.metadata)));
      templates.informer.on(ev, (t: ResourceClaimTemplate) => {
        const owner = t.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'USBDevice');
        if (owner !== undefined) enqueue(objectKey({ namespace: t.metadata.namespace, name: owner.name }));
      });
      // A device follows the VMs that name it or hold it attached (Attached, their node's USB/IP ports).
      w.caches.vms.informer.on(ev, (v: VirtualMachine, old?: VirtualMachine) => {
        if (ev === 'update' && old !== undefined && sameUsb(v, old)) return;
        for (const name of usbDeviceNames(v, old)) enqueue(objectKey({ namespace: v.metadata.namespace, name }));
      });
    }
  },
};

/** Nothing USB about the VM changed: its devices, their status, its node. */
export function sameUsb(v: VirtualMachine, old: VirtualMachine): boolean {
  return (
    deepEqual(old.spec.usbDevices, v.spec.usbDevices) && deepEqual(old.status?.usbDevices, v.status?.usbDevices) && old.status?.nodeName === v.status?.nodeName
  );
}

/** The devices a VM names, holds, or held before this change. */
export function usbDeviceNames(v: VirtualMachine, old: VirtualMachine | undefined): Set<string> {
  return new Set([...(v.spec.usbDevices ?? []), ...(v.status?.usbDevices ?? []), ...(old?.status?.usbDevices ?? [])].map((d) => d.name));
}
