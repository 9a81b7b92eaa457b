/**
 * The port through which an attachment reaches the hypervisor: the module's subresource API
 * (`virtualmachines/<vm>/addvolume` and `/removevolume` of subresources.virtualization.deckhouse.io),
 * which hands the request on to KubeVirt. Tests that run without that aggregated API pass their own
 * implementation of this interface.
 */
import type { KubeClient } from '../../../../shared/kube/index.js';

export const SUBRESOURCE_GROUP_PATH = '/apis/subresources.virtualization.deckhouse.io/v1alpha2';

export interface AddVolumeRequest {
  namespace: string;
  vm: string;
  /** The volume and disk name in the VM (`vd-<name>`, `vi-<name>`, `cvi-<name>`). */
  name: string;
  volumeKind: 'VirtualDisk' | 'VirtualImage' | 'ClusterVirtualImage';
  pvcName?: string | undefined;
  image?: string | undefined;
  serial?: string | undefined;
  isCdrom: boolean;
}

export interface RemoveVolumeRequest {
  namespace: string;
  vm: string;
  name: string;
}

export interface VolumeHotplug {
  addVolume(req: AddVolumeRequest, signal: AbortSignal): Promise<void>;
  removeVolume(req: RemoveVolumeRequest, signal: AbortSignal): Promise<void>;
}

function vmPath(namespace: string, vm: string, sub: string): string {
  return `${SUBRESOURCE_GROUP_PATH}/namespaces/${encodeURIComponent(namespace)}/virtualmachines/${encodeURIComponent(vm)}/${sub}`;
}

/** Hot-plug through the apiserver's aggregated subresource API, with the controller's own credentials. */
export function subresourceHotplug(kube: KubeClient): VolumeHotplug {
  return {
    async addVolume(req, signal): Promise<void> {
      await kube.rest.request({
        method: 'PUT',
        path: vmPath(req.namespace, req.vm, 'addvolume'),
        query: { name: req.name, volumeKind: req.volumeKind, pvcName: req.pvcName, image: req.image, serial: req.serial, isCdrom: req.isCdrom },
        body: {},
        signal,
        what: `addvolume ${req.name} to VirtualMachine ${req.namespace}/${req.vm}`,
      });
    },
    async removeVolume(req, signal): Promise<void> {
      await kube.rest.request({
        method: 'PUT',
        path: vmPath(req.namespace, req.vm, 'removevolume'),
        query: { name: req.name },
        body: {},
        signal,
        what: `removevolume ${req.name} from VirtualMachine ${req.namespace}/${req.vm}`,
      });
    },
  };
}
