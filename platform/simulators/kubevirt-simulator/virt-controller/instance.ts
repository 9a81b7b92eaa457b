/**
 * virt-controller's part of one instance, with launcher pods (not run in node-agent mode, where the
 * real virt-controller does it): the instance gets a pod, the real scheduler places it, and the
 * instance goes Pending → Scheduling → Scheduled on the pod's node; from there virt-handler
 * (../virt-handler/) runs the guest. A pod that ends or vanishes under the instance fails it; an
 * instance being deleted loses its pods first, then its finalizer.
 */
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { find, ref, remove, withConditions, type StepContext } from '../context.js';
import type { LauncherPod } from '../kube.js';
import { activePod, podsOf } from '../../../../shared/api/internal/launcher.js';
import { buildLauncherPod, podState, unschedulableMessage } from '../launcher.js';

type VMI = InternalVirtualMachineInstance;

/** Keeps an instance until its launcher pods are gone (KubeVirt's own finalizer name). */
export const INSTANCE_FINALIZER = 'foregroundDeleteVirtualMachine';

export interface InstanceView {
  /** The scheduler could not place the instance's pod. */
  unschedulable: boolean;
}

/** Pods of an instance that no longer exists (a restart made a new one): KubeVirt tears them down. */
export async function deleteStrayPods(ctx: StepContext, vmi: VMI | undefined, pods: readonly LauncherPod[]): Promise<void> {
  const mine = new Set(vmi === undefined ? [] : podsOf(vmi, pods));
  for (const p of pods) {
    if (p.metadata.deletionTimestamp !== undefined || mine.has(p)) continue;
    ctx.log.info({ pod: p.metadata.name }, 'deleting the launcher pod of a gone instance');
    await remove(() => ctx.c.pods.delete(ref(p.metadata.namespace ?? '', p.metadata.name ?? '')));
  }
}

/**
 * An instance being deleted: its launcher pods are deleted (kwok ends them like a kubelet), and once
 * none is left the finalizer goes, so the instance disappears after its pods, as with KubeVirt.
 */
export async function finalizeInstance(ctx: StepContext, vmi: VMI, pods: readonly LauncherPod[]): Promise<void> {
  const mine = podsOf(vmi, pods);
  for (const p of mine) {
    if (p.metadata.deletionTimestamp === undefined) await remove(() => ctx.c.pods.delete(ref(p.metadata.namespace ?? '', p.metadata.name ?? '')));
  }
  const finalizers = vmi.metadata.finalizers ?? [];
  if (mine.length > 0 || !finalizers.includes(INSTANCE_FINALIZER)) return;
  const rest = finalizers.filter((f) => f !== INSTANCE_FINALIZER);
  await find(() =>
    ctx.c.kvvmis.mergePatch(ref(vmi.metadata.namespace ?? '', vmi.metadata.name ?? ''), {
      metadata: { finalizers: rest.length > 0 ? rest : null, resourceVersion: vmi.metadata.resourceVersion },
    }),
  );
}

/** One step of virt-controller's part of the instance; the next event (or timer) brings the next step. */
export async function advanceInstance(ctx: StepContext, vmi: VMI, pods: readonly LauncherPod[]): Promise<InstanceView> {
  const phase = vmi.status?.phase ?? '';
  if (vmi.metadata.deletionTimestamp !== undefined || phase === 'Succeeded' || phase === 'Failed') return { unschedulable: false };
  const key = `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;
  const pod = activePod(vmi, pods);
  const state = pod === undefined ? undefined : podState(pod);
  const patch = (status: Record<string, unknown>): Promise<VMI> =>
    ctx.c.kvvmis.mergePatch(ref(vmi.metadata.namespace ?? '', vmi.metadata.name ?? ''), {
      metadata: { resourceVersion: vmi.metadata.resourceVersion },
      status,
    });

  if (phase === '' || phase === 'Pending') {
    if (pod === undefined) {
      const created = await ctx.c.pods.create(buildLauncherPod(vmi));
      ctx.log.info({ vm: key, pod: created.metadata.name }, 'launcher pod created');
    }
    await patch({ phase: 'Scheduling' });
    return { unschedulable: false };
  }
  if (pod === undefined || state === 'deleting' || state === 'ended') {
    ctx.log.warn({ vm: key, phase, pod: pod?.metadata.name }, 'the launcher pod is gone: the instance failed');
    await patch({ phase: 'Failed', reason: 'PodTerminating' });
    return { unschedulable: false };
  }
  const node = pod.spec?.nodeName ?? '';
  const conditions = vmi.status?.conditions;
  if (phase === 'Scheduling') {
    if (state === 'unschedulable') {
      const message = unschedulableMessage(pod) ?? 'no node fits';
      await patch({ conditions: withConditions(conditions, [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }]) });
      return { unschedulable: true };
    }
    if (state === 'bound' || state === 'running') {
      ctx.log.info({ vm: key, node }, 'instance scheduled');
      await patch({
        phase: 'Scheduled',
        nodeName: node,
        activePods: { [pod.metadata.uid ?? '']: node },
        conditions: withConditions(conditions, [{ type: 'PodScheduled', status: 'True' }]),
      });
    }
    return { unschedulable: false };
  }
  // The instance is ready while its guest runs in a ready pod (virt-controller reads the pod's readiness).
  if (phase === 'Running' && state === 'running' && conditions?.find((c) => c.type === 'Ready')?.status !== 'True') {
    await patch({ conditions: withConditions(conditions, [{ type: 'Ready', status: 'True' }]) });
  }
  return { unschedulable: false };
}
