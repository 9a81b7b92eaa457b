/**
 * The controller's hot-plug port wired to the KubeVirt simulator's virt-api stand-in, for tests that
 * run without the aggregated subresource API: each call is turned into KubeVirt's request by the
 * subresource API's own translation (`functions/subresources/options.ts`) and PUT over HTTP to the
 * stand-in, whose `volumes` part changes the instance as KubeVirt does (spec, disk, volumeStatus).
 * Every call is also recorded (`RecordingHotplug`), as the controller made it.
 */
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { ResourceClient } from '../../../../shared/kube/index.js';
import { childLogger } from '../../../../shared/log/index.js';
import { plainUpstream } from '../../../../functions/subresources/options.js';
import { VirtApiStandIn } from '../../../../platform/simulators/kubevirt-simulator/virt-api/virt-api-stand-in.js';
import { kubevirtVolumes } from '../../../../platform/simulators/kubevirt-simulator/virt-api/volumes.js';
import { RecordingHotplug } from '../recording-hotplug.js';

export class KubeVirtHotplug extends RecordingHotplug {
  readonly virtApi: VirtApiStandIn;

  constructor(kvvmis: Pick<ResourceClient<InternalVirtualMachineInstance>, 'get' | 'mergePatch'>) {
    super();
    this.virtApi = new VirtApiStandIn({ log: childLogger({ component: 'virt-api-stand-in' }), volumes: kubevirtVolumes(kvvmis) });
  }

  start(): Promise<void> {
    return this.virtApi.start();
  }

  stop(): Promise<void> {
    return this.virtApi.stop();
  }

  protected async put(sub: string, namespace: string, vm: string, query: Record<string, string | undefined>, signal?: AbortSignal): Promise<void> {
    const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
    const up = plainUpstream(sub, namespace, vm, q, Buffer.alloc(0));
    const res = await fetch(`${this.virtApi.url}${up.path}`, { method: 'PUT', body: up.body, signal: signal ?? null });
    if (!res.ok) throw new Error(`${sub} ${namespace}/${vm}: ${res.status} ${await res.text()}`);
  }
}
