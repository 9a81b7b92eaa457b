/**
 * The port through which a snapshot freezes and thaws a running VM's guest filesystems: the module's
 * subresource API (`virtualmachines/<vm>/freeze` and `/unfreeze` of
 * subresources.virtualization.deckhouse.io), which hands the call on to KubeVirt and its guest agent.
 * Tests without that aggregated API pass their own implementation.
 */
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { KubeClient } from '../../../../shared/kube/index.js';
import { SUBRESOURCE_GROUP_PATH } from '../vmbda/hotplug.js';

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
  const call = async (sub: 'freeze' | 'unfreeze', namespace: string, vm: string, signal: AbortSignal): Promise<void> => {
    await kube.rest.request({
      method: 'PUT',
      path: `${SUBRESOURCE_GROUP_PATH}/namespaces/${encodeURIComponent(namespace)}/virtualmachines/${encodeURIComponent(vm)}/${sub}`,
      body: {},
      signal,
      what: `${sub} VirtualMachine ${namespace}/${vm}`,
    });
  };
  return {
    freeze: (namespace, vm, signal) => call('freeze', namespace, vm, signal),
    unfreeze: (namespace, vm, signal) => call('unfreeze', namespace, vm, signal),
  };
}
