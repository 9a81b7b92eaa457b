/**
 * The ports through which the controller hot-plugs into a running VM: the module's subresource API
 * (`virtualmachines/<vm>/addvolume`, `/removevolume`, `/addresourceclaim`, `/removeresourceclaim` of
 * subresources.virtualization.deckhouse.io), which hands the request on to KubeVirt. Attachments use
 * the volume calls, a VM's `spec.usbDevices` the resource-claim calls. Tests that run without that
 * aggregated API pass their own implementations of these interfaces.
 */
import type { KubeClient } from '../../../../shared/kube/index.js';

const SUBRESOURCE_GROUP_PATH = '/apis/subresources.virtualization.deckhouse.io/v1alpha2';

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

type Query = Parameters<KubeClient['rest']['request']>[0]['query'];

/** PUT a VM's subresource on the aggregated subresource API (`what` names the call in errors). */
export async function putVmSubresource(
  kube: KubeClient,
  ref: { namespace: string; vm: string },
  sub: string,
  query: Query,
  what: string,
  signal: AbortSignal,
): Promise<void> {
  const path = `${SUBRESOURCE_GROUP_PATH}/namespaces/${encodeURIComponent(ref.namespace)}/virtualmachines/${encodeURIComponent(ref.vm)}/${sub}`;
  await kube.rest.request({
    method: 'PUT',
    path,
    ...(query === undefined ? {} : { query }),
    body: {},
    signal,
    what: `${what} VirtualMachine ${ref.namespace}/${ref.vm}`,
  });
}

/** Hot-plug through the apiserver's aggregated subresource API, with the controller's own credentials. */
export function subresourceHotplug(kube: KubeClient): VolumeHotplug & ClaimHotplug {
  return {
    addVolume: (req, signal) =>
      putVmSubresource(
        kube,
        req,
        'addvolume',
        { name: req.name, volumeKind: req.volumeKind, pvcName: req.pvcName, image: req.image, serial: req.serial, isCdrom: req.isCdrom },
        `addvolume ${req.name} to`,
        signal,
      ),
    removeVolume: (req, signal) => putVmSubresource(kube, req, 'removevolume', { name: req.name }, `removevolume ${req.name} from`, signal),
    addResourceClaim: (req, signal) =>
      putVmSubresource(
        kube,
        req,
        'addresourceclaim',
        { name: req.name, resourceClaimTemplateName: req.resourceClaimTemplateName, requestName: req.requestName },
        `addresourceclaim ${req.name} to`,
        signal,
      ),
    removeResourceClaim: (req, signal) =>
      putVmSubresource(kube, req, 'removeresourceclaim', { name: req.name }, `removeresourceclaim ${req.name} from`, signal),
  };
}
