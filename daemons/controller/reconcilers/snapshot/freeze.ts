/**
 * The port through which a snapshot freezes and thaws a running VM's guest filesystems: the module's
 * subresource API (`virtualmachines/<vm>/freeze` and `/unfreeze` of
 * subresources.virtualization.deckhouse.io), which hands the call on to KubeVirt and its guest agent.
 * Tests without that aggregated API pass their own implementation.
 */
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { KubeClient } from '../../../../shared/kube/index.js';
import { putVmSubresource } from '../vmbda/hotplug.js';
import type { SnapshotDeps } from './deps.js';

export interface GuestFilesystems {
  freeze(namespace: string, vm: string, signal: AbortSignal): Promise<void>;
  unfreeze(namespace: string, vm: string, signal: AbortSignal): Promise<void>;
}

/** The annotation on a VolumeSnapshot (disk snapshot) or VirtualDiskSnapshot (VM snapshot) taken with the VM frozen: the VM's name. */
export const FROZEN_VM = 'virtualization.deckhouse.io/frozen-vm';

/** Whether the instance's guest agent is connected (freezing needs it). */
export function agentConnected(vmi: InternalVirtualMachineInstance | undefined): boolean {
  return (vmi?.status?.conditions ?? []).some((c) => c.type === 'AgentConnected' && c.status === 'True');
}

/** Freeze and thaw through the apiserver's aggregated subresource API, with the controller's own credentials. */
export function subresourceFilesystems(kube: KubeClient): GuestFilesystems {
  return {
    freeze: (namespace, vm, signal) => putVmSubresource(kube, { namespace, vm }, 'freeze', undefined, 'freeze', signal),
    unfreeze: (namespace, vm, signal) => putVmSubresource(kube, { namespace, vm }, 'unfreeze', undefined, 'unfreeze', signal),
  };
}

/**
 * Whether another snapshot still needs `vm` frozen (KubeVirt's freeze is not counted: one thaw thaws
 * all): a VolumeSnapshot taken frozen and not yet cut (neither ready nor failed), or a disk snapshot
 * of a VM snapshot that froze the VM, not yet finished. The last one done thaws.
 */
export function stillNeededFrozen(d: SnapshotDeps, namespace: string, vm: string, except: { volumeSnapshot?: string; vmSnapshot?: string }): boolean {
  const live = (o: {
    metadata: { namespace?: string | undefined; deletionTimestamp?: string | undefined; annotations?: Record<string, string> | undefined };
  }): boolean => o.metadata.namespace === namespace && o.metadata.deletionTimestamp === undefined && o.metadata.annotations?.[FROZEN_VM] === vm;
  const pendingVolumeSnapshot = (d.snapshots.caches.volumeSnapshots?.list() ?? []).some(
    (vs) => live(vs) && vs.metadata.name !== except.volumeSnapshot && vs.status?.readyToUse !== true && vs.status?.error === undefined,
  );
  const pendingDiskSnapshot = d.snapshots.caches.vdSnapshots
    .list()
    .some(
      (vds) =>
        live(vds) &&
        vds.status?.phase !== 'Ready' &&
        vds.status?.phase !== 'Failed' &&
        !(vds.metadata.ownerReferences ?? []).some((o) => o.kind === 'VirtualMachineSnapshot' && o.name === except.vmSnapshot),
    );
  return pendingVolumeSnapshot || pendingDiskSnapshot;
}
