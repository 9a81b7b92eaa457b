import { COMPUTE_CONTAINER, CREATED_BY_LABEL } from '../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachineInstance } from '../../../shared/api/internal/resources.js';
import type { ResourceClient } from '../../../shared/kube/index.js';
import type { LauncherPods } from '../deps.js';
import { parseGuestEvent, type GuestEvent } from '../reconcilers/vm/power.js';
import type { Pod } from './resources.js';

/** Reads the guest's last power event from the termination message of the launcher's compute container. */
export function launcherPods(pods: ResourceClient<Pod>): LauncherPods {
  return {
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
