/** Which objects' changes enqueue which reconciler keys. */
import type { KubeObject } from '../../shared/kube/index.js';
import type { Caches } from './deps.js';
import type { ObjectCache } from './engine/cache.js';
import { deepEqual } from './engine/merge-diff.js';
import { keyOf } from './engine/reconciler.js';
import type { Runner } from './engine/runner.js';
import { LEASE_BY_VMIP } from './reconcilers/ipam/vmip.js';
import { autoAddressName, ownerVMKeys } from './reconcilers/vm/handlers/ipam.js';
import { VMIndex, deviceKey } from './reconcilers/vm/state.js';
import { VMOP_BY_VM } from './reconcilers/vmop/index.js';
import { objectKey } from '../../shared/kube/index.js';

export interface Runners {
  vm: Runner;
  vmop: Runner;
  vmip: Runner;
  lease: Runner;
  vmclass: Runner;
}

/** Which updates matter to a mapping; the others enqueue nothing (adds and deletes always do). */
export type UpdateFilter<T> = (obj: T, old: T) => boolean;

/**
 * On add, update (old and new) and delete of an object, enqueue the keys `map` gives. A resync (an
 * update of the object with itself) always enqueues: it is the periodic look that heals a missed event.
 */
export function enqueueOn<T extends KubeObject>(cache: ObjectCache<T>, runner: Runner, map: (obj: T) => Iterable<string>, matters?: UpdateFilter<T>): void {
  const push = (obj: T): void => {
    for (const key of map(obj)) runner.enqueue(key);
  };
  cache.informer.on('add', push);
  cache.informer.on('update', (obj, old) => {
    if (matters !== undefined && obj !== old && !matters(obj, old)) return;
    push(obj);
    push(old);
  });
  cache.informer.on('delete', push);
}

/** The spec (generation) or the metadata the controller acts on changed: not just the status. */
export function specOrMetaChanged(obj: KubeObject, old: KubeObject): boolean {
  const a = obj.metadata;
  const b = old.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    !sameList(a.finalizers, b.finalizers) ||
    !sameRecord(a.annotations, b.annotations) ||
    !sameRecord(a.labels, b.labels)
  );
}

/** Only the status changed (someone else's view of it matters, e.g. a dependency's readiness). */
export function statusChanged(obj: KubeObject & { status?: unknown }, old: KubeObject & { status?: unknown }): boolean {
  return !deepEqual(obj.status, old.status) || specOrMetaChanged(obj, old);
}

/** An operation's siblings wait for its phase; its own status is otherwise ours. */
function phaseOrMetaChanged(op: { status?: { phase?: string } } & KubeObject, old: { status?: { phase?: string } } & KubeObject): boolean {
  return op.status?.phase !== old.status?.phase || specOrMetaChanged(op, old);
}

function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return deepEqual(a ?? [], b ?? []);
}

function sameRecord(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  return deepEqual(a ?? {}, b ?? {});
}

const ns = (o: KubeObject): string => o.metadata.namespace ?? '';
const keysOf = (objs: readonly KubeObject[]): string[] => objs.map(keyOf);

export function wireSources(caches: Caches, r: Runners): void {
  const self = (o: KubeObject): string[] => [keyOf(o)];
  // VirtualMachine: itself, its internal objects, class, devices and address.
  enqueueOn(
    caches.vms,
    r.vm,
    self,
    (vm, old) => vm.metadata.generation !== old.metadata.generation || vm.metadata.deletionTimestamp !== old.metadata.deletionTimestamp,
  );
  enqueueOn(caches.kvvms, r.vm, self);
  enqueueOn(caches.kvvmis, r.vm, self);
  enqueueOn(caches.classes, r.vm, (c) => keysOf(caches.vms.byIndex(VMIndex.byClass, c.metadata.name ?? '')));
  enqueueOn(caches.disks, r.vm, (d) => keysOf(caches.vms.byIndex(VMIndex.byDevice, deviceKey('VirtualDisk', ns(d), d.metadata.name ?? ''))));
  enqueueOn(caches.images, r.vm, (i) => keysOf(caches.vms.byIndex(VMIndex.byDevice, deviceKey('VirtualImage', ns(i), i.metadata.name ?? ''))));
  enqueueOn(caches.clusterImages, r.vm, (i) =>
    keysOf(caches.vms.byIndex(VMIndex.byDevice, deviceKey('ClusterVirtualImage', undefined, i.metadata.name ?? ''))),
  );
  enqueueOn(caches.vmips, r.vm, (ip) => [...ownerVMKeys(ip), ...keysOf(caches.vms.byIndex(VMIndex.byIPAddress, keyOf(ip)))], statusChanged);
  // VirtualMachineOperation: itself and its siblings on the same VM (one runs at a time), and whatever
  // its VM, instance or migration does.
  enqueueOn(
    caches.vmops,
    r.vmop,
    (op) => [keyOf(op), ...keysOf(caches.vmops.byIndex(VMOP_BY_VM, objectKey({ namespace: op.metadata.namespace, name: op.spec.virtualMachineName })))],
    phaseOrMetaChanged,
  );
  enqueueOn(caches.vms, r.vmop, (vm) => keysOf(caches.vmops.byIndex(VMOP_BY_VM, keyOf(vm))));
  enqueueOn(caches.kvvms, r.vmop, (o) => keysOf(caches.vmops.byIndex(VMOP_BY_VM, keyOf(o))));
  enqueueOn(caches.kvvmis, r.vmop, (o) => keysOf(caches.vmops.byIndex(VMOP_BY_VM, keyOf(o))));
  enqueueOn(caches.migrations, r.vmop, (m) => {
    const owner = m.metadata.ownerReferences?.find((o) => o.kind === 'VirtualMachineOperation');
    return owner === undefined ? [] : [objectKey({ namespace: m.metadata.namespace, name: owner.name })];
  });
  // VirtualMachineIPAddress: itself, its lease, the VMs naming it.
  enqueueOn(caches.vmips, r.vmip, self, specOrMetaChanged);
  enqueueOn(
    caches.leases,
    r.vmip,
    (l) => {
      const ref = l.spec.virtualMachineIPAddressRef;
      return ref === undefined || ref.name === '' ? [] : [objectKey(ref)];
    },
    specOrMetaChanged,
  );
  enqueueOn(
    caches.vms,
    r.vmip,
    (vm) => {
      const names = [vm.spec.virtualMachineIPAddressName, vm.status?.virtualMachineIPAddressName, autoAddressName(vm)];
      return [...new Set(names.filter((n): n is string => n !== undefined && n !== ''))].map((n) => objectKey({ namespace: vm.metadata.namespace, name: n }));
    },
    (vm, old) =>
      vm.spec.virtualMachineIPAddressName !== old.spec.virtualMachineIPAddressName ||
      vm.status?.virtualMachineIPAddressName !== old.status?.virtualMachineIPAddressName ||
      vm.metadata.deletionTimestamp !== old.metadata.deletionTimestamp,
  );
  enqueueOn(
    caches.kvvmis,
    r.vmip,
    (vmi) => {
      const vm = caches.vms.get(keyOf(vmi));
      const name = vm?.status?.virtualMachineIPAddressName;
      return name === undefined ? [] : [objectKey({ namespace: vmi.metadata.namespace, name })];
    },
    () => false,
  );
  // VirtualMachineIPAddressLease: itself and its address.
  enqueueOn(caches.leases, r.lease, self, specOrMetaChanged);
  enqueueOn(caches.vmips, r.lease, (ip) => caches.leases.byIndex(LEASE_BY_VMIP, keyOf(ip)).map(keyOf), specOrMetaChanged);
  // VirtualMachineClass: itself, every node change, the VMs that use it.
  enqueueOn(caches.classes, r.vmclass, self, specOrMetaChanged);
  enqueueOn(caches.nodes, r.vmclass, () => keysOf(caches.classes.list()));
  enqueueOn(
    caches.vms,
    r.vmclass,
    (vm) => [vm.spec.virtualMachineClassName],
    (vm, old) => vm.spec.virtualMachineClassName !== old.spec.virtualMachineClassName || vm.metadata.deletionTimestamp !== old.metadata.deletionTimestamp,
  );
}
