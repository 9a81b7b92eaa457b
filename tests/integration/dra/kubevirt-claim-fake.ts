/**
 * KubeVirt's side of a resource-claim hot-plug, faked for tests that run without the subresource API
 * and KubeVirt (test support, not shipped behaviour): records every addresourceclaim and
 * removeresourceclaim the controller sends and does to the instance what KubeVirt would once the
 * device reached the guest (a Ready entry in status.deviceStatus.hostDeviceStatuses with a `bus:port`
 * address; removed on removeresourceclaim). `failNext` makes the next call fail as virt-api would.
 */
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import type { AddResourceClaimRequest, ClaimHotplug, RemoveResourceClaimRequest } from '../../../daemons/controller/reconcilers/vmbda/hotplug.js';
import { KubeApiError } from '../../../shared/errors/index.js';

export type ClaimCall = ({ op: 'add' } & AddResourceClaimRequest) | ({ op: 'remove' } & RemoveResourceClaimRequest);

type HostDevice = { name: string; phase?: string | undefined; address?: string | undefined };

export class KubeVirtClaimFake implements ClaimHotplug {
  readonly calls: ClaimCall[] = [];
  private failures = 0;

  constructor(private readonly c: Clients) {}

  /** The next `n` calls answer 500 and change nothing. */
  failNext(n = 1): void {
    this.failures = n;
  }

  private fail(): void {
    if (this.failures === 0) return;
    this.failures -= 1;
    throw new KubeApiError('virt-api fake: internal error', 500, 'InternalError');
  }

  async addResourceClaim(req: AddResourceClaimRequest): Promise<void> {
    this.calls.push({ op: 'add', ...req });
    this.fail();
    await this.edit(req.namespace, req.vm, (devices) => {
      const port = devices.length + 1;
      return [...devices.filter((d) => d.name !== req.name), { name: req.name, phase: 'Ready', address: `0:${port}` }];
    });
  }

  async removeResourceClaim(req: RemoveResourceClaimRequest): Promise<void> {
    this.calls.push({ op: 'remove', ...req });
    this.fail();
    await this.edit(req.namespace, req.vm, (devices) => devices.filter((d) => d.name !== req.name));
  }

  private async edit(namespace: string, vm: string, change: (devices: HostDevice[]) => HostDevice[]): Promise<void> {
    const ref = { namespace, name: vm };
    const vmi = await this.c.kvvmis.get(ref);
    const hostDeviceStatuses = change(vmi.status?.deviceStatus?.hostDeviceStatuses ?? []);
    // As upstream, the instance has no status subresource: status is written with the object.
    await this.c.kvvmis.mergePatch(ref, { status: { deviceStatus: { hostDeviceStatuses } } });
  }
}
