/**
 * virt-controller and virt-handler for one running instance, with launcher pods: the instance gets a
 * pod, the real scheduler places it, the node simulator (kwok) runs it, and the guest "boots":
 * Pending → Scheduling → Scheduled → Running, the guest agent reporting the address. A pod that ends
 * or vanishes under a running instance fails it.
 */
import type { InternalVirtualMachineInstance } from '../../../shared/api/internal/resources.js';
import { find, now, ref, remove, type StepContext } from './context.js';
import type { LauncherPod } from './kube.js';
import { buildLauncherPod, CILIUM_IP_ANNOTATION, CREATED_BY_LABEL, MIGRATION_LABEL, podState, unschedulableMessage } from './launcher.js';

type VMI = InternalVirtualMachineInstance;

/** Keeps an instance until its launcher pods are gone (KubeVirt's own finalizer name). */
export const INSTANCE_FINALIZER = 'foregroundDeleteVirtualMachine';

export interface InstanceView {
  /** The scheduler could not place the instance's pod. */
  unschedulable: boolean;
}

const uidOf = (vmi: VMI): string => vmi.metadata.uid ?? '';
const isOf =
  (vmi: VMI) =>
  (p: LauncherPod): boolean =>
    p.metadata.labels?.[CREATED_BY_LABEL] === uidOf(vmi);

/** The pod the guest runs in now: the one the instance lists as active, else its first (non-migration) pod. */
export function activePod(vmi: VMI, pods: readonly LauncherPod[]): LauncherPod | undefined {
  const mine = pods.filter(isOf(vmi));
  const active = Object.keys(vmi.status?.activePods ?? {});
  if (active.length > 0) return mine.find((p) => active.includes(p.metadata.uid ?? ''));
  return mine.find((p) => p.metadata.labels?.[MIGRATION_LABEL] === undefined);
}

/** Pods of an instance that no longer exists (a restart made a new one): KubeVirt tears them down. */
export async function deleteStrayPods(ctx: StepContext, vmi: VMI | undefined, pods: readonly LauncherPod[]): Promise<void> {
  for (const p of pods) {
    if (p.metadata.deletionTimestamp !== undefined) continue;
    if (vmi !== undefined && isOf(vmi)(p)) continue;
    ctx.log.info({ pod: p.metadata.name }, 'deleting the launcher pod of a gone instance');
    await remove(() => ctx.c.pods.delete(ref(p.metadata.namespace ?? '', p.metadata.name ?? '')));
  }
}

/**
 * An instance being deleted: its launcher pods are deleted (kwok ends them like a kubelet), and once
 * none is left the finalizer goes, so the instance disappears after its pods, as with KubeVirt.
 */
export async function finalizeInstance(ctx: StepContext, vmi: VMI, pods: readonly LauncherPod[]): Promise<void> {
  const mine = pods.filter(isOf(vmi));
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

/** One step of the instance's life; the next event (or timer) brings the next step. */
export async function advanceInstance(ctx: StepContext, vmi: VMI, pods: readonly LauncherPod[]): Promise<InstanceView> {
  const phase = vmi.status?.phase ?? '';
  if (vmi.metadata.deletionTimestamp !== undefined || phase === 'Succeeded' || phase === 'Failed') return { unschedulable: false };
  const key = `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;
  const pod = activePod(vmi, pods);
  const state = pod === undefined ? undefined : podState(pod);
  const patch = (status: Record<string, unknown>): Promise<VMI> =>
    ctx.c.kvvmis.mergePatch(ref(vmi.metadata.namespace ?? '', vmi.metadata.name ?? ''), { status });

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
  if (phase === 'Scheduling') {
    if (state === 'unschedulable') {
      const message = unschedulableMessage(pod) ?? 'no node fits';
      await patch({ conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }] });
      return { unschedulable: true };
    }
    if (state === 'bound' || state === 'running') {
      ctx.log.info({ vm: key, node }, 'instance scheduled');
      await patch({ phase: 'Scheduled', nodeName: node, conditions: [{ type: 'PodScheduled', status: 'True' }] });
    }
    return { unschedulable: false };
  }
  if (phase === 'Scheduled' && state === 'running') {
    const bootKey = `boot:${uidOf(vmi)}`;
    if (!ctx.elapsed(bootKey, ctx.bootDelayMs, key)) return { unschedulable: false };
    ctx.forget(bootKey);
    const ip = vmi.metadata.annotations?.[CILIUM_IP_ANNOTATION] ?? pod.status?.podIP ?? '';
    ctx.log.info({ vm: key, node, ip }, 'guest running; the guest agent reports its address');
    await patch({
      phase: 'Running',
      nodeName: node,
      interfaces: [{ name: 'default', ipAddress: ip, ipAddresses: [ip], infoSource: 'domain, guest-agent' }],
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: now() },
        { type: 'AgentConnected', status: 'True', lastTransitionTime: now() },
      ],
      guestOSInfo: { id: 'simulated', name: 'kubevirt-simulator', prettyName: 'Simulated guest (no hypervisor)' },
      activePods: { [pod.metadata.uid ?? '']: node },
    });
  }
  return { unschedulable: false };
}
