import type { InternalVirtualMachineInstance } from '../../../shared/api/internal/resources.js';
import type { ResourceClient } from '../../../shared/kube/index.js';
import type { LauncherPods } from '../deps.js';
import { parseGuestEvent, type GuestEvent } from '../reconcilers/vm/power.js';
import type { Pod } from './resources.js';

/** Label KubeVirt puts on a virt-launcher pod: the uid of its instance. */
export const CREATED_BY_LABEL = 'kubevirt.io/created-by';
/** The container running the guest; its termination message says how the guest ended. */
export const COMPUTE_CONTAINER = 'compute';

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
