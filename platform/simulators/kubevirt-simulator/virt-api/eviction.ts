/**
 * virt-api's eviction interceptor (`virt-launcher-eviction-interceptor.kubevirt.io`), the decision
 * part, as KubeVirt v1.6 makes it: an eviction of a running virt-launcher pod whose instance is to be
 * live-migrated on eviction (the cluster's `evictionStrategy`, LiveMigrate in our KubeVirt config,
 * unless the instance names its own) is refused with 429, and the instance is marked for evacuation
 * (`status.evacuationNodeName` = the pod's node), which the controller turns into an Evict operation.
 * The guest keeps running; the refusal tells the drain why and to retry.
 */
import { DOMAIN_ANNOTATION, LAUNCHER_LABEL, LAUNCHER_VALUE } from '../../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { LauncherPod } from '../kube.js';

export type EvictionStrategy = 'None' | 'LiveMigrate' | 'LiveMigrateIfPossible' | 'External';

/** What the interceptor answers: let the eviction go on, or refuse it (429), marking the instance first when `mark` names a node. */
export type EvictionVerdict = { readonly allowed: true } | { readonly allowed: false; readonly message: string; readonly mark?: string };

const ALLOW: EvictionVerdict = { allowed: true };
const deny = (message: string, mark?: string): EvictionVerdict => ({ allowed: false, message, ...(mark === undefined ? {} : { mark }) });

/** The instance a launcher pod runs, when the pod is a running launcher pod; undefined: not ours to judge. */
export function launcherInstanceName(pod: LauncherPod): string | undefined {
  if (pod.metadata.labels?.[LAUNCHER_LABEL] !== LAUNCHER_VALUE) return undefined;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  return pod.metadata.annotations?.[DOMAIN_ANNOTATION];
}

/** KubeVirt's IsMigratable: the instance's LiveMigratable condition is True. */
function migratable(vmi: InternalVirtualMachineInstance): boolean {
  return vmi.status?.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True') ?? false;
}

function strategyOf(vmi: InternalVirtualMachineInstance, cluster: EvictionStrategy | undefined): EvictionStrategy | undefined {
  const own = (vmi.spec as { evictionStrategy?: unknown } | undefined)?.evictionStrategy;
  return typeof own === 'string' ? (own as EvictionStrategy) : cluster;
}

/** Whether the strategy marks the instance, or the refusal of an instance that must migrate but cannot. */
function shouldMark(strategy: EvictionStrategy | undefined, vmi: InternalVirtualMachineInstance): boolean | EvictionVerdict {
  switch (strategy) {
    case 'LiveMigrate':
      return migratable(vmi) || deny(`VMI ${vmi.metadata.name ?? ''} is configured with an eviction strategy but is not live-migratable`);
    case 'LiveMigrateIfPossible':
      return migratable(vmi);
    case 'External':
      return true;
    default:
      return false;
  }
}

/** The verdict on evicting `pod` (a running launcher pod) of instance `vmi`. */
export function judgeLauncherEviction(pod: LauncherPod, vmi: InternalVirtualMachineInstance, cluster: EvictionStrategy | undefined): EvictionVerdict {
  const name = vmi.metadata.name ?? '';
  const strategy = strategyOf(vmi, cluster);
  const mark = shouldMark(strategy, vmi);
  if (typeof mark === 'object') return mark;
  if (!mark) return ALLOW;
  const triggered = `Eviction triggered evacuation of VMI "${vmi.metadata.namespace ?? ''}/${name}"`;
  const marked = vmi.status?.evacuationNodeName;
  if (marked !== undefined && marked !== '') return deny(`Evacuation in progress: ${triggered}`);
  const node = pod.spec?.nodeName ?? '';
  if (vmi.status?.nodeName !== node) return deny('Eviction request for target Pod');
  return deny(triggered, node);
}
