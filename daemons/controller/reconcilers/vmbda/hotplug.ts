/**
 * The ports through which the controller hot-plugs into a running VM: the module's subresource API
 * (`virtualmachines/<vm>/addvolume`, `/removevolume`, `/addresourceclaim`, `/removeresourceclaim` of
 * subresources.virtualization.deckhouse.io), which hands the request on to KubeVirt. Attachments use
 * the volume calls, a VM's `spec.usbDevices` the resource-claim calls. Tests that run without that
 * aggregated API pass their own implementations of these interfaces.
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

export interface AddResourceClaimRequest {
  namespace: string;
  vm: string;
  /** The name of the claim in the VM (the USBDevice name, as the original). */
  name: string;
  resourceClaimTemplateName: string;
  requestName: string;
}

export interface RemoveResourceClaimRequest {
  namespace: string;
  vm: string;
  name: string;
}

export interface ClaimHotplug {
  addResourceClaim(req: AddResourceClaimRequest, signal: AbortSignal): Promise<void>;
  removeResourceClaim(req: RemoveResourceClaimRequest, signal: AbortSignal): Promise<void>;
}

/** The path of a VM's subresource on the aggregated subresource API. */
export function vmPath(namespace: string, vm: string, sub: string): string {
  return `${SUBRESOURCE_GROUP_PATH}/namespaces/${encodeURIComponent(namespace)}/virtualmachines/${encodeURIComponent(vm)}/${sub}`;
}

/** Hot-plug through the apiserver's aggregated subresource API, with the controller's own credentials. */
export function subresourceHotplug(kube: KubeClient): VolumeHotplug & ClaimHotplug {
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
    async addResourceClaim(req, signal): Promise<void> {
      await kube.rest.request({
        method: 'PUT',
        path: vmPath(req.namespace, req.vm, 'addresourceclaim'),
        query: { name: req.name, resourceClaimTemplateName: req.resourceClaimTemplateName, requestName: req.requestName },
        body: {},
        signal,
        what: `addresourceclaim ${req.name} to VirtualMachine ${req.namespace}/${req.vm}`,
      });
    },
    async removeResourceClaim(req, signal): Promise<void> {
      await kube.rest.request({
        method: 'PUT',
        path: vmPath(req.namespace, req.vm, 'removeresourceclaim'),
        query: { name: req.name },
        body: {},
        signal,
        what: `removeresourceclaim ${req.name} from VirtualMachine ${req.namespace}/${req.vm}`,
      });
    },
  };
}
