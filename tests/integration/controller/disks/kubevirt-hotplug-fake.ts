/**
 * KubeVirt's side of a volume hot-plug, faked for tests that run without the subresource API and
 * KubeVirt (test support, not shipped behaviour): records every addvolume/removevolume the controller
 * sends and does to the instance what KubeVirt would (the volume in spec.volumes and a Ready
 * status.volumeStatus entry; both removed on removevolume).
 */
import type { Clients } from '../../../../daemons/controller/kube/resources.js';
import type { AddVolumeRequest, RemoveVolumeRequest, VolumeHotplug } from '../../../../daemons/controller/reconcilers/vmbda/hotplug.js';

export type HotplugCall = ({ op: 'add' } & AddVolumeRequest) | ({ op: 'remove' } & RemoveVolumeRequest);

export class KubeVirtHotplugFake implements VolumeHotplug {
  readonly calls: HotplugCall[] = [];

  constructor(private readonly c: Clients) {}

  async addVolume(req: AddVolumeRequest): Promise<void> {
    this.calls.push({ op: 'add', ...req });
    const ref = { namespace: req.namespace, name: req.vm };
    const vmi = await this.c.kvvmis.get(ref);
    const source =
      req.pvcName !== undefined
        ? { persistentVolumeClaim: { claimName: req.pvcName, hotpluggable: true } }
        : { containerDisk: { image: req.image ?? '', hotpluggable: true } };
    const volumes = [...(vmi.spec.volumes ?? []).filter((v) => v.name !== req.name), { name: req.name, ...source }];
    const statuses = [
      ...(vmi.status?.volumeStatus ?? []).filter((v) => (v as { name?: string }).name !== req.name),
      { name: req.name, target: 'sdb', phase: 'Ready', hotplugVolume: {} },
    ];
    // As upstream, the instance has no status subresource: spec and status are written together.
    await this.c.kvvmis.mergePatch(ref, { spec: { volumes }, status: { volumeStatus: statuses } });
  }

  async removeVolume(req: RemoveVolumeRequest): Promise<void> {
    this.calls.push({ op: 'remove', ...req });
    const ref = { namespace: req.namespace, name: req.vm };
    const vmi = await this.c.kvvmis.get(ref);
    await this.c.kvvmis.mergePatch(ref, {
      spec: { volumes: (vmi.spec.volumes ?? []).filter((v) => v.name !== req.name) },
      status: { volumeStatus: (vmi.status?.volumeStatus ?? []).filter((v) => (v as { name?: string }).name !== req.name) },
    });
  }
}
