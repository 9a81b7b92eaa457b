import type { ResourceClaim, ResourceClaimTemplate } from '../../../../shared/api/k8s/resource.js';
import type { USBDevice } from '../../../../shared/api/resources/usb.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import { missingKubeVirtParts } from '../../../../shared/api/internal/kubevirt-required.js';
import type { InternalKubeVirt } from '../../../../shared/api/internal/resources.js';
import { objectKey, type KubeObject } from '../../../../shared/kube/index.js';
import { kubeVirtConfigParts } from '../kubevirt-config/parts.js';
import type { ReconcilerDeclaration, Wiring } from '../../declaration.js';
import { keyOf } from '../../engine/reconciler.js';
import { enqueueOn, statusChanged } from '../../sources.js';
import { macParts } from '../mac/parts.js';
import { usbParts } from '../usb/parts.js';
import { sameUsb, usbDeviceNames } from '../usb/usbdevice/declaration.js';
import { USB_DEVICE_LABEL } from './usb.js';
import { ownerVMKeys } from './handlers/ipam.js';
import { vmReconciler } from './index.js';
import { macPort } from './mac-port.js';
import { ownerVM } from './handlers/mac-owned.js';
import { VMIndex, deviceKey, podVMKeys } from './state.js';
import { deepEqual } from '../../engine/merge-diff.js';
import type { ObjectCache } from '../../engine/cache.js';

/** VirtualMachine → internal VM (key: namespace/name). Every source that wakes a VM is here. */
export const vmDeclaration: ReconcilerDeclaration = {
  name: 'vm',
  workers: (config) => config.RECONCILE_WORKERS,
  // The MAC reconcilers' address cache: a VM's additional networks take their MAC addresses from it.
  caches: (w) => [w.shared(macParts).vmmacs as unknown as ObjectCache<KubeObject>],
  reconcile: (w) => {
    return vmReconciler(w.deps, macPort(w.shared(macParts)));
  },
  sources(w, enqueue) {
    const { caches } = w;
    const self = (o: KubeObject): string[] => [keyOf(o)];
    const byIndex = (index: string, value: string): string[] => caches.vms.byIndex(index, value).map(keyOf);
    // Itself, its internal objects, class, devices and address.
    enqueueOn(
      caches.vms,
      enqueue,
      self,
      (vm, old) =>
        vm.metadata.generation !== old.metadata.generation ||
        vm.metadata.deletionTimestamp !== old.metadata.deletionTimestamp ||
        !deepEqual(vm.metadata.labels, old.metadata.labels) ||
        !deepEqual(vm.metadata.annotations, old.metadata.annotations),
    );
    // Its launcher pods: status.virtualMachinePods and the metadata propagated to the active one.
    enqueueOn(caches.pods, enqueue, podVMKeys);
    enqueueOn(caches.kvvms, enqueue, self);
    enqueueOn(caches.kvvmis, enqueue, self);
    enqueueOn(caches.classes, enqueue, (c) => byIndex(VMIndex.byClass, c.metadata.name ?? ''));
    enqueueOn(caches.disks, enqueue, (d) => byIndex(VMIndex.byDevice, deviceKey('VirtualDisk', d.metadata.namespace, d.metadata.name ?? '')));
    enqueueOn(caches.images, enqueue, (i) => byIndex(VMIndex.byDevice, deviceKey('VirtualImage', i.metadata.namespace, i.metadata.name ?? '')));
    enqueueOn(caches.clusterImages, enqueue, (i) => byIndex(VMIndex.byDevice, deviceKey('ClusterVirtualImage', undefined, i.metadata.name ?? '')));
    enqueueOn(caches.vmips, enqueue, (ip) => [...ownerVMKeys(ip), ...byIndex(VMIndex.byIPAddress, keyOf(ip))], statusChanged);
    // A MAC address the VM names (or the controller made for it) was made, bound, attached elsewhere or let go.
    enqueueOn(
      w.shared(macParts).vmmacs,
      enqueue,
      (m) => {
        const owner = ownerVM(m);
        const naming = caches.vms
          .list()
          .filter(
            (v) => v.metadata.namespace === m.metadata.namespace && (v.spec.networks ?? []).some((n) => n.virtualMachineMACAddressName === m.metadata.name),
          )
          .map(keyOf);
        return owner === undefined ? naming : [...naming, objectKey({ namespace: m.metadata.namespace, name: owner.name })];
      },
      statusChanged,
    );
    // The subnets changed: every VM's address may be in or out of them now.
    w.cidrs.onChange(() => {
      for (const vm of caches.vms.list()) enqueue(objectKey(vm.metadata));
    });
    if (w.features.usb) usbSources(w, enqueue);
    // KubeVirt's configuration gained or lost a part every VM relies on: every VM says so, or stops saying it.
    if (w.features.kubevirtConfig) {
      const all = (): string[] => caches.vms.list().map(keyOf);
      const missing = (kv: InternalKubeVirt): string => missingKubeVirtParts(kv).join();
      enqueueOn(w.shared(kubeVirtConfigParts).cache, enqueue, all, (kv, old) => missing(kv) !== missing(old));
    }
  },
};

/** VMs wake on their USBDevices, templates and claims, on other VMs letting a device go, and once USB is ready. */
function usbSources(w: Wiring, enqueue: (key: string) => void): void {
  const { usbDevices, templates, claims, vmPort } = w.shared(usbParts);
  const vms = w.caches.vms;
  const naming = (namespace: string | undefined, device: string): void => {
    for (const v of vms.byIndex(VMIndex.byUsbDevice, objectKey({ namespace, name: device }))) enqueue(objectKey(v.metadata));
  };
  for (const ev of ['add', 'update', 'delete'] as const) {
    usbDevices.informer.on(ev, (u: USBDevice) => naming(u.metadata.namespace, u.metadata.name ?? ''));
    templates.informer.on(ev, (t: ResourceClaimTemplate) => {
      const owner = t.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'USBDevice');
      if (owner !== undefined) naming(t.metadata.namespace, owner.name);
    });
    claims.informer.on(ev, (claim: ResourceClaim) => {
      const device = claim.metadata.labels?.[USB_DEVICE_LABEL];
      if (device !== undefined) naming(claim.metadata.namespace, device);
      const owner = claim.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'VirtualMachine');
      if (owner !== undefined) enqueue(objectKey({ namespace: claim.metadata.namespace, name: owner.name }));
    });
    // Other VMs naming the same device wait for this one to let go.
    vms.informer.on(ev, (v: VirtualMachine, old?: VirtualMachine) => {
      if (ev === 'update' && old !== undefined && sameUsb(v, old)) return;
      for (const n of usbDeviceNames(v, old))
        for (const other of vms.byIndex(VMIndex.byUsbDevice, objectKey({ namespace: v.metadata.namespace, name: n })))
          if (other.metadata.uid !== v.metadata.uid) enqueue(objectKey(other.metadata));
    });
  }
  // VMs attach their spec.usbDevices once the USB caches are synced (the port stays empty until then).
  vmPort.onReady(() => {
    for (const v of vms.list()) if ((v.spec.usbDevices ?? []).length > 0) enqueue(objectKey(v.metadata));
  });
}
