/** Which objects' changes enqueue which reconciler keys. */
import type { KubeObject } from '../../shared/kube/index.js';
import type { Caches } from './deps.js';
import type { ObjectCache } from './engine/cache.js';
import { keyOf } from './engine/reconciler.js';
import type { Runner } from './engine/runner.js';
import { LEASE_BY_VMIP } from './reconcilers/ipam/vmip.js';
import { autoAddressName } from './reconcilers/vm/handlers/ipam.js';
import { VMIndex, deviceKey } from './reconcilers/vm/state.js';
import { VMOP_BY_VM } from './reconcilers/vmop/index.js';

export interface Runners {
  vm: Runner;
  vmop: Runner;
  vmip: Runner;
  lease: Runner;
  vmclass: Runner;
}

/** On add, update (old and new) and delete of an object, enqueue the keys `map` gives. */
export function enqueueOn<T extends KubeObject>(cache: ObjectCache<T>, runner: Runner, map: (obj: T) => Iterable<string>): void {
  const push = (obj: T): void => {
    for (const key of map(obj)) runner.enqueue(key);
  };
  cache.informer.on('add', push);
  cache.informer.on('update', (obj, old) => {
    push(obj);
    push(old);
  });
  cache.informer.on('delete', push);
}

const ns = (o: KubeObject): string => o.metadata.namespace ?? '';
const keysOf = (objs: readonly KubeObject[]): string[] => objs.map(keyOf);

/** The VM that a controller ownerReference of this kind points at. */
function ownerVM(o: KubeObject): string[] {
  const ref = o.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === 'VirtualMachine');
  return ref === undefined ? [] : [`${ns(o)}/${ref.name}`];
}

export function wireSources(caches: Caches, r: Runners): void {
  const self = (o: KubeObject): string[] => [keyOf(o)];
  // VirtualMachine: itself, its internal objects, class, devices and address.
  enqueueOn(caches.vms, r.vm, self);
  enqueueOn(caches.kvvms, r.vm, self);
  enqueueOn(caches.kvvmis, r.vm, self);
  enqueueOn(caches.classes, r.vm, (c) => keysOf(caches.vms.byIndex(VMIndex.byClass, c.metadata.name ?? '')));
  enqueueOn(caches.disks, r.vm, (d) => keysOf(caches.vms.byIndex(VMIndex.byDevice, deviceKey('VirtualDisk', ns(d), d.metadata.name ?? ''))));
  enqueueOn(caches.images, r.vm, (i) => keysOf(caches.vms.byIndex(VMIndex.byDevice, deviceKey('VirtualImage', ns(i), i.metadata.name ?? ''))));
  enqueueOn(caches.clusterImages, r.vm, (i) => keysOf(caches.vms.byIndex(VMIndex.byDevice, deviceKey('ClusterVirtualImage', undefined, i.metadata.name ?? ''))));
  enqueueOn(caches.vmips, r.vm, (ip) => [...ownerVM(ip), ...keysOf(caches.vms.byIndex(VMIndex.byIPAddress, keyOf(ip)))]);
  // VirtualMachineOperation: itself and its siblings on the same VM (one runs at a time), and whatever
  // its VM, instance or migration does.
  enqueueOn(caches.vmops, r.vmop, (op) => [keyOf(op), ...keysOf(caches.vmops.byIndex(VMOP_BY_VM, `${ns(op)}/${op.spec.virtualMachineName}`))]);
  enqueueOn(caches.vms, r.vmop, (vm) => keysOf(caches.vmops.byIndex(VMOP_BY_VM, keyOf(vm))));
  enqueueOn(caches.kvvms, r.vmop, (o) => keysOf(caches.vmops.byIndex(VMOP_BY_VM, keyOf(o))));
  enqueueOn(caches.kvvmis, r.vmop, (o) => keysOf(caches.vmops.byIndex(VMOP_BY_VM, keyOf(o))));
  enqueueOn(caches.migrations, r.vmop, (m) => {
    const owner = m.metadata.ownerReferences?.find((o) => o.kind === 'VirtualMachineOperation');
    return owner === undefined ? [] : [`${ns(m)}/${owner.name}`];
  });
  // VirtualMachineIPAddress: itself, its lease, the VMs naming it.
  enqueueOn(caches.vmips, r.vmip, self);
  enqueueOn(caches.leases, r.vmip, (l) => {
    const ref = l.spec.virtualMachineIPAddressRef;
    return ref === undefined || ref.name === '' ? [] : [`${ref.namespace}/${ref.name}`];
  });
  enqueueOn(caches.vms, r.vmip, (vm) => {
    const names = [vm.spec.virtualMachineIPAddressName, vm.status?.virtualMachineIPAddressName, autoAddressName(vm)];
    return [...new Set(names.filter((n): n is string => n !== undefined && n !== ''))].map((n) => `${ns(vm)}/${n}`);
  });
  enqueueOn(caches.kvvmis, r.vmip, (vmi) => {
    const vm = caches.vms.get(keyOf(vmi));
    const name = vm?.status?.virtualMachineIPAddressName;
    return name === undefined ? [] : [`${ns(vmi)}/${name}`];
  });
  // VirtualMachineIPAddressLease: itself and its address.
  enqueueOn(caches.leases, r.lease, self);
  enqueueOn(caches.vmips, r.lease, (ip) => caches.leases.byIndex(LEASE_BY_VMIP, keyOf(ip)).map(keyOf));
  // VirtualMachineClass: itself, every node change, the VMs that use it.
  enqueueOn(caches.classes, r.vmclass, self);
  enqueueOn(caches.nodes, r.vmclass, () => keysOf(caches.classes.list()));
  enqueueOn(caches.vms, r.vmclass, (vm) => [vm.spec.virtualMachineClassName]);
}
