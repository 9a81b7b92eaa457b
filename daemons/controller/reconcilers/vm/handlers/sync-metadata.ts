import { activePod, INHIBIT_NODE_SHUTDOWN_LABEL } from '../../../../../shared/api/internal/launcher.js';
import type { InternalVirtualMachineInstance } from '../../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { conditionalMergePatch } from '../../../../../shared/kube/index.js';
import type { Deps } from '../../../deps.js';
import type { Handler, HandlerContext } from '../../../engine/reconciler.js';
import {
  LAST_PROPAGATED_ANNOTATIONS,
  LAST_PROPAGATED_LABELS,
  metadataChanges,
  parseLastPropagated,
  propagatableAnnotations,
  propagatedLabels,
  type StringMap,
} from '../kvvm/propagation.js';
import type { Pod } from '../../../kube/resources.js';
import { podsOfVM, type VMState } from '../state.js';

export { LAST_PROPAGATED_ANNOTATIONS, LAST_PROPAGATED_LABELS, metadataChanges, parseLastPropagated, propagatableAnnotations } from '../kvvm/propagation.js';

/**
 * The VM's labels and annotations on its instance and its running launcher pod, the active one (as the
 * original's SyncMetadata handler does), and taken off again when removed from the VM: what was
 * propagated is remembered on the internal VM (LAST_PROPAGATED_*), written after them, and only once
 * the internal VM itself carries them (syncKvvm puts them there and on its template, `kvvm/build.ts`),
 * so a key removed meanwhile is still known to be ours.
 */
export function syncMetadataHandler(deps: Deps): Handler<VMState> {
  return {
    name: 'syncMetadata',
    async handle(s, ctx): Promise<void> {
      const kvvm = s.kvvm;
      if (s.obj.metadata.deletionTimestamp !== undefined || kvvm === undefined) return;
      const kvvmAnnotations = kvvm.metadata.annotations ?? {};
      const lastLabels = lastPropagated(kvvmAnnotations[LAST_PROPAGATED_LABELS], LAST_PROPAGATED_LABELS, ctx);
      const lastAnnotations = lastPropagated(kvvmAnnotations[LAST_PROPAGATED_ANNOTATIONS], LAST_PROPAGATED_ANNOTATIONS, ctx);
      const labels = propagatedLabels(s.obj.metadata.labels);
      const annotations = propagatableAnnotations(s.obj.metadata.annotations);
      const wanted: Wanted = { labels, annotations, lastLabels, lastAnnotations };
      const vmi = s.kvvmi;
      if (vmi !== undefined && vmi.metadata.deletionTimestamp === undefined)
        s.kvvmi = (await propagateTo(vmi, { client: deps.clients.kvvmis, cache: deps.caches.kvvmis }, wanted, ctx)) ?? vmi;
      const pods = podsOfVM(deps.caches.pods, s.obj);
      const pod = s.kvvmi === undefined ? undefined : activePod(s.kvvmi, pods);
      const podTarget = { client: deps.clients.pods, cache: deps.caches.pods };
      if (pod !== undefined && pod.status?.phase === 'Running') await propagateTo(pod, podTarget, wanted, ctx);
      // A pod a migration left behind runs the VM no more: it stops holding its node's shutdown.
      for (const stale of pods.filter((p) => p !== pod && leftBehind(p.metadata.name, s.kvvmi) && INHIBIT_NODE_SHUTDOWN_LABEL in (p.metadata.labels ?? {})))
        await releaseNode(stale, podTarget, ctx);
      const applied =
        metadataChanges(kvvm.metadata.labels, lastLabels, labels) === undefined && metadataChanges(kvvmAnnotations, lastAnnotations, annotations) === undefined;
      const remembered = rememberedChanges(kvvmAnnotations, s.obj);
      if (remembered === undefined || !applied) return;
      const ref = { namespace: kvvm.metadata.namespace, name: kvvm.metadata.name ?? '' };
      const patch = conditionalMergePatch({ metadata: { annotations: remembered } }, kvvm.metadata.resourceVersion);
      s.kvvm = deps.caches.kvvms.remember(await deps.clients.kvvms.mergePatch(ref, patch, { signal: ctx.signal }));
    },
  };
}

function lastPropagated(text: string | undefined, key: string, ctx: HandlerContext): StringMap {
  const { map, broken } = parseLastPropagated(text);
  if (broken) ctx.log.warn({ annotation: key }, 'the internal VM carries an unreadable last-propagated annotation; it is rewritten from the VM');
  return map;
}

/** What the VM says now and what was propagated last time. */
interface Wanted {
  labels: StringMap;
  annotations: StringMap;
  lastLabels: StringMap;
  lastAnnotations: StringMap;
}

interface Target<T> {
  client: { mergePatch(ref: { namespace?: string | undefined; name: string }, patch: object, opts: { signal: AbortSignal }): Promise<T> };
  cache: { remember(obj: T): T };
}

/** One conditional merge patch of the object's labels and annotations that change; undefined when none does. */
async function propagateTo<
  T extends {
    metadata: { namespace?: string | undefined; name?: string | undefined; resourceVersion?: string | undefined } & Partial<
      Record<'labels' | 'annotations', StringMap | undefined>
    >;
  },
>(obj: T, to: Target<T>, w: Wanted, ctx: HandlerContext): Promise<T | undefined> {
  const labels = metadataChanges(obj.metadata.labels, w.lastLabels, w.labels);
  const annotations = metadataChanges(obj.metadata.annotations, w.lastAnnotations, w.annotations);
  if (labels === undefined && annotations === undefined) return undefined;
  const metadata = { ...(labels === undefined ? {} : { labels }), ...(annotations === undefined ? {} : { annotations }) };
  const ref = { namespace: obj.metadata.namespace, name: obj.metadata.name ?? '' };
  const patched = to.cache.remember(await to.client.mergePatch(ref, conditionalMergePatch({ metadata }, obj.metadata.resourceVersion), { signal: ctx.signal }));
  ctx.log.debug({ object: ref.name }, 'propagated the VM labels and annotations');
  return patched;
}

/** Whether the pod named so is the one a finished migration left behind: the source of a completed one, the target of a failed one. */
export function leftBehind(name: string | undefined, vmi: InternalVirtualMachineInstance | undefined): boolean {
  const m = vmi?.status?.migrationState;
  if (name === undefined || m == null || m.endTimestamp == null) return false;
  return (m.completed === true && m.sourcePod === name) || (m.failed === true && m.targetPod === name);
}

/** The node-shutdown inhibitor's label off a launcher pod (one conditional merge patch). */
async function releaseNode(pod: Pod, to: Target<Pod>, ctx: HandlerContext): Promise<void> {
  const ref = { namespace: pod.metadata.namespace, name: pod.metadata.name ?? '' };
  const patch = conditionalMergePatch({ metadata: { labels: { [INHIBIT_NODE_SHUTDOWN_LABEL]: null } } }, pod.metadata.resourceVersion);
  to.cache.remember(await to.client.mergePatch(ref, patch, { signal: ctx.signal }));
  ctx.log.info({ pod: ref.name }, 'a launcher pod a migration left behind no longer holds its node from shutting down');
}

/** The last-propagated annotations to write when they differ from what the VM has now. */
function rememberedChanges(kvvmAnnotations: StringMap, vm: VirtualMachine): StringMap | undefined {
  const want: StringMap = {
    [LAST_PROPAGATED_LABELS]: JSON.stringify(vm.metadata.labels ?? {}),
    [LAST_PROPAGATED_ANNOTATIONS]: JSON.stringify(propagatableAnnotations(vm.metadata.annotations)),
  };
  const changed = Object.entries(want).filter(([k, v]) => kvvmAnnotations[k] !== v);
  return changed.length === 0 ? undefined : Object.fromEntries(changed);
}
