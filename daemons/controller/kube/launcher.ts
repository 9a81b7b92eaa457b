import { COMPUTE_CONTAINER, CREATED_BY_LABEL } from '../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachineInstance } from '../../../shared/api/internal/resources.js';
import type { ResourceClient } from '../../../shared/kube/index.js';
import type { LauncherPods } from '../deps.js';
import { parseGuestEvent, type GuestEvent } from '../reconcilers/vm/power.js';
import type { CoreEvent, Pod } from './resources.js';

/** Events that say a pod's volume could not be attached or mounted (the attach-detach controller's and the kubelet's reasons). */
export const VOLUME_ERROR_REASONS: ReadonlySet<string> = new Set(['FailedAttachVolume', 'FailedMount']);

/** When an event last happened (a series' last time, else when it was made). */
function lastSeen(e: CoreEvent): string {
  return e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp ?? '';
}

/**
 * What the VM reconciler reads about launcher pods beyond its caches: the guest's last power event from
 * the termination message of the compute container, and the latest event of a pod being created.
 */
export function launcherPods(pods: ResourceClient<Pod>, events: ResourceClient<CoreEvent>): LauncherPods {
  return {
    async volumeError(pod: Pod, signal: AbortSignal): Promise<string | undefined> {
      const list = await events.list({
        namespace: pod.metadata.namespace,
        fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${pod.metadata.name ?? ''}`,
        signal,
      });
      const last = list.items.reduce<CoreEvent | undefined>((a, e) => (a === undefined || lastSeen(e) > lastSeen(a) ? e : a), undefined);
      return last !== undefined && VOLUME_ERROR_REASONS.has(last.reason ?? '') ? `${last.reason ?? ''}: ${last.message ?? ''}` : undefined;
    },
    async guestEvent(vmi: InternalVirtualMachineInstance, signal: AbortSignal): Promise<GuestEvent> {
      const list = await pods.list({ namespace: vmi.metadata.namespace, labelSelector: `${CREATED_BY_LABEL}=${vmi.metadata.uid ?? ''}`, signal });
      for (const pod of list.items) {
        const compute = pod.status?.containerStatuses?.find((c) => c.name === COMPUTE_CONTAINER);
        const event = parseGuestEvent(compute?.state?.terminated?.message ?? compute?.lastState?.terminated?.message);
        if (event !== undefined) return event;
      }
      return undefined;
    },
  };
}
