import { activePod } from '../../../../../shared/api/internal/launcher.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import { conditionalMergePatch } from '../../../../../shared/kube/index.js';
import type { Deps } from '../../../deps.js';
import type { Handler, HandlerContext } from '../../../engine/reconciler.js';
import type { Pod } from '../../../kube/resources.js';
import { podsOfVM, type VMState } from '../state.js';

/** On the internal VM: the VM's labels and annotations as last propagated (JSON maps), as the original names them. */
export const LAST_PROPAGATED_LABELS = 'internal.virtualization.deckhouse.io/last-propagated-vm-labels';
export const LAST_PROPAGATED_ANNOTATIONS = 'internal.virtualization.deckhouse.io/last-propagated-vm-annotations';

type StringMap = Record<string, string>;

/** The VM's annotations that are never propagated: our own bookkeeping and kubectl's. */
export function propagatableAnnotations(annotations: StringMap | undefined): StringMap {
  return Object.fromEntries(
    Object.entries(annotations ?? {}).filter(
      ([k]) => k !== LAST_PROPAGATED_LABELS && k !== LAST_PROPAGATED_ANNOTATIONS && !k.startsWith('kubectl.kubernetes.io'),
    ),
  );
}

/**
 * The merge-patch map that takes `current` to what the VM says: every key of `desired` set, every key
 * propagated last time and no longer on the VM removed; keys someone else set are left alone.
 * Undefined when nothing changes.
 */
export function metadataChanges(current: StringMap | undefined, lastPropagated: StringMap, desired: StringMap): Record<string, string | null> | undefined {
  const have = current ?? {};
  const out: Record<string, string | null> = {};
  for (const k of Object.keys(lastPropagated)) if (!(k in desired) && k in have) out[k] = null;
  for (const [k, v] of Object.entries(desired)) if (have[k] !== v) out[k] = v;
  return Object.keys(out).length === 0 ? undefined : out;
}

/** A last-propagated annotation's map; a value that is not a JSON map of strings counts as nothing propagated. */
export function parseLastPropagated(text: string | undefined): { map: StringMap; broken: boolean } {
  if (text === undefined || text === '') return { map: {}, broken: false };
  try {
    const value = JSON.parse(text) as unknown;
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string'))
      return { map: value as StringMap, broken: false };
  } catch {
    // reported below
  }
  return { map: {}, broken: true };
}

/**
 * The VM's labels and annotations on its running launcher pod, the active one (as the original's
 * SyncMetadata handler does for running pods), and taken off again when removed from the VM: what was
 * propagated is remembered on the internal VM (LAST_PROPAGATED_*), written after the pod.
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
      const labels = s.obj.metadata.labels ?? {};
      const annotations = propagatableAnnotations(s.obj.metadata.annotations);
      const pod = s.kvvmi === undefined ? undefined : activePod(s.kvvmi, podsOfVM(deps.caches.pods, s.obj));
      if (pod !== undefined && pod.status?.phase === 'Running')
        await patchPod(
          deps,
          pod,
          ctx,
          metadataChanges(pod.metadata.labels, lastLabels, labels),
          metadataChanges(pod.metadata.annotations, lastAnnotations, annotations),
        );
      const remembered = rememberedChanges(kvvmAnnotations, s.obj);
      if (remembered === undefined) return;
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

async function patchPod(
  deps: Deps,
  pod: Pod,
  ctx: HandlerContext,
  labels: Record<string, string | null> | undefined,
  annotations: Record<string, string | null> | undefined,
): Promise<void> {
  if (labels === undefined && annotations === undefined) return;
  const metadata = { ...(labels === undefined ? {} : { labels }), ...(annotations === undefined ? {} : { annotations }) };
  const ref = { namespace: pod.metadata.namespace, name: pod.metadata.name ?? '' };
  deps.caches.pods.remember(await deps.clients.pods.mergePatch(ref, conditionalMergePatch({ metadata }, pod.metadata.resourceVersion), { signal: ctx.signal }));
  ctx.log.debug({ pod: ref.name }, 'propagated the VM labels and annotations to its launcher pod');
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
