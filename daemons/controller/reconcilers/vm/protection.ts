import { Finalizer } from '../../../../shared/api/finalizers.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import { addFinalizer, hasFinalizer, removeFinalizer, type KubeObject, type ResourcePort } from '../../../../shared/kube/index.js';
import type { CachePort, Deps } from '../../deps.js';
import { VMIndex, deviceKey } from './state.js';

type DeviceKind = VirtualMachine['spec']['blockDeviceRefs'][number]['kind'];

/** Add or remove one device's protection finalizer (idempotent; a missing device is skipped). */
interface Protection {
  protect(signal: AbortSignal): Promise<void>;
  release(signal: AbortSignal): Promise<void>;
}

function protection<T extends KubeObject>(cache: CachePort<T>, client: ResourcePort<T>, finalizer: string, key: string): Protection {
  return {
    async protect(signal): Promise<void> {
      const obj = cache.get(key);
      if (obj === undefined || obj.metadata.deletionTimestamp !== undefined || hasFinalizer(obj, finalizer)) return;
      cache.remember(await addFinalizer(client, obj, finalizer, { signal }));
    },
    async release(signal): Promise<void> {
      const obj = cache.get(key);
      if (obj === undefined || !hasFinalizer(obj, finalizer)) return;
      cache.remember(await removeFinalizer(client, obj, finalizer, { signal }));
    },
  };
}

function protectionOf(deps: Deps, kind: DeviceKind, namespace: string | undefined, name: string): Protection {
  const { caches, clients } = deps;
  const key = `${namespace ?? ''}/${name}`;
  switch (kind) {
    case 'VirtualDisk':
      return protection(caches.disks, clients.disks, Finalizer.vdProtection, key);
    case 'VirtualImage':
      return protection(caches.images, clients.images, Finalizer.viProtection, key);
    case 'ClusterVirtualImage':
      return protection(caches.clusterImages, clients.clusterImages, Finalizer.cviProtection, name);
  }
}

/** Put the protection finalizer on a device the VM uses, so it is not deleted from under the VM. */
export async function protectDevice(deps: Deps, kind: DeviceKind, namespace: string | undefined, name: string, signal: AbortSignal): Promise<void> {
  await protectionOf(deps, kind, namespace, name).protect(signal);
}

/** Remove the protection from the given devices that no other live VM references. */
export async function releaseUnusedDevices(
  deps: Deps,
  vm: VirtualMachine,
  refs: readonly { kind: DeviceKind; name: string }[],
  signal: AbortSignal,
): Promise<void> {
  for (const ref of refs) {
    const users = deps.caches.vms
      .byIndex(VMIndex.byDevice, deviceKey(ref.kind, vm.metadata.namespace, ref.name))
      .filter((other) => other.metadata.uid !== vm.metadata.uid && other.metadata.deletionTimestamp === undefined);
    if (users.length === 0) await protectionOf(deps, ref.kind, vm.metadata.namespace, ref.name).release(signal);
  }
}
