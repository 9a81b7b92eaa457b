/**
 * The controller's volume hot-plug port for tests that run without the aggregated subresource API:
 * every call is recorded as the controller made it, then sent as the subresource API's query options
 * (`put`) to whichever virt-api the test has: the simulator's stand-in (disks/kubevirt-hotplug.ts) or
 * real virt-api (../kubevirt/virt-api-hotplug.ts).
 */
import type { AddVolumeRequest, RemoveVolumeRequest, VolumeHotplug } from '../../../daemons/controller/reconcilers/vmbda/hotplug.js';

export type HotplugCall = ({ op: 'add' } & AddVolumeRequest) | ({ op: 'remove' } & RemoveVolumeRequest);

export abstract class RecordingHotplug implements VolumeHotplug {
  readonly calls: HotplugCall[] = [];

  async addVolume(req: AddVolumeRequest, signal: AbortSignal): Promise<void> {
    this.calls.push({ op: 'add', ...req });
    const { namespace, vm, name, volumeKind, pvcName, image, serial, isCdrom } = req;
    await this.put('addvolume', namespace, vm, { name, volumeKind, pvcName, image, serial, isCdrom: String(isCdrom) }, signal);
  }

  async removeVolume(req: RemoveVolumeRequest, signal: AbortSignal): Promise<void> {
    this.calls.push({ op: 'remove', ...req });
    await this.put('removevolume', req.namespace, req.vm, { name: req.name }, signal);
  }

  /** A VM subresource call from these query options (undefined ones left out); a refusal throws. */
  protected abstract put(sub: string, namespace: string, vm: string, query: Record<string, string | undefined>, signal?: AbortSignal): Promise<unknown>;
}
