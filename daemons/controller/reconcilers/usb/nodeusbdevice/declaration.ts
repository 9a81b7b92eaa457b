import type { ResourceSlice } from '../../../../../shared/api/k8s/resource.js';
import type { NodeUSBDevice, USBDevice } from '../../../../../shared/api/resources/usb.js';
import type { KubeObject } from '../../../../../shared/kube/index.js';
import type { ReconcilerDeclaration } from '../../../declaration.js';
import { attributesOf, nodeUSBDeviceName, usbDevicesOf } from '../attributes.js';
import { UsbIndex } from '../deps.js';
import { usbParts } from '../parts.js';
import { nodeUSBDeviceReconciler } from './reconciler.js';

/** NodeUSBDevice: Ready, assignment to a namespace, Attached (key: its name). */
export const nodeUSBDeviceDeclaration: ReconcilerDeclaration = {
  name: 'nodeusbdevice',
  workers: () => 2,
  enabled: (f) => f.usb,
  late: true,
  caches: (w) => w.shared(usbParts).all,
  reconcile: (w) => nodeUSBDeviceReconciler(w.shared(usbParts).deps),
  sources(w, enqueue) {
    const { slices, nodeDevices, usbDevices, namespaces } = w.shared(usbParts);
    for (const ev of ['add', 'update', 'delete'] as const) {
      slices.informer.on(ev, (s: ResourceSlice) => {
        const devices = usbDevicesOf(s);
        if (devices.length === 0 && s.spec.driver !== 'virtualization-usb') return;
        for (const d of devices) enqueue(nodeUSBDeviceName(attributesOf(d, s.spec.pool.name).name ?? d.name));
        // Devices gone from the pool: their NodeUSBDevices turn NotFound.
        for (const n of nodeDevices.list()) if (n.status?.nodeName === s.spec.pool.name) enqueue(n.metadata.name ?? '');
      });
      nodeDevices.informer.on(ev, (n: NodeUSBDevice) => enqueue(n.metadata.name ?? ''));
      usbDevices.informer.on(ev, (u: USBDevice) => enqueue(u.metadata.name ?? ''));
      namespaces.informer.on(ev, (ns: KubeObject) => {
        for (const n of nodeDevices.byIndex(UsbIndex.nodeDevicesByNamespace, ns.metadata.name ?? '')) enqueue(n.metadata.name ?? '');
      });
    }
  },
};
