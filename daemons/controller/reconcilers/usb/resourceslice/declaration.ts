import type { ResourceSlice } from '../../../../../shared/api/k8s/resource.js';
import type { NodeUSBDevice } from '../../../../../shared/api/resources/usb.js';
import type { ReconcilerDeclaration } from '../../../declaration.js';
import type { Node } from '../../../kube/resources.js';
import { usbDevicesOf } from '../attributes.js';
import { UsbIndex } from '../deps.js';
import { usbParts } from '../parts.js';
import { resourceSliceReconciler } from './reconciler.js';

/** ResourceSlice → NodeUSBDevices (key: the slice name). */
export const resourceSliceDeclaration: ReconcilerDeclaration = {
  name: 'usb-resourceslice',
  workers: () => 2,
  enabled: (f) => f.usb,
  late: true,
  caches: (w) => w.shared(usbParts).all,
  reconcile: (w) => resourceSliceReconciler(w.shared(usbParts).deps),
  sources(w, enqueue) {
    const { slices, nodeDevices } = w.shared(usbParts);
    for (const ev of ['add', 'update', 'delete'] as const) {
      slices.informer.on(ev, (s: ResourceSlice) => {
        if (usbDevicesOf(s).length > 0 || s.spec.driver === 'virtualization-usb') enqueue(s.metadata.name ?? '');
      });
      // A deleted NodeUSBDevice whose device still exists is created again by its slice.
      if (ev === 'delete')
        nodeDevices.informer.on(ev, (n: NodeUSBDevice) => {
          for (const r of n.metadata.ownerReferences ?? []) if (r.kind === 'ResourceSlice') enqueue(r.name);
        });
      // A node entering the scope (labelled late, or seen after its slices): its slices are ours now.
      w.caches.nodes.informer.on(ev, (n: Node) => {
        for (const s of slices.byIndex(UsbIndex.slicesByPool, n.metadata.name ?? '')) enqueue(s.metadata.name ?? '');
      });
    }
  },
};
