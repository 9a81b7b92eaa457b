/** ResourceSlice → NodeUSBDevice (discovery; facts §3.2), with the original's conditions and messages. */
import { Finalizer } from '../../../../../shared/api/finalizers.js';
import { labelsMatchingAs } from '../../../../../shared/kube/index.js';
import type { ReconcileFn } from '../../../engine/runner.js';
import { attributesOf, nodeUSBDeviceName, sameAttributes, usbDevicesOf } from '../attributes.js';
import { type UsbDeps, ownerRef, ignoreExists } from '../deps.js';

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
