/**
 * The VM's labels and annotations as the original propagates them: onto the internal VM, its template
 * (so a new instance starts with them), the instance and the running launcher pod; a key removed from
 * the VM is taken off again, known from what was propagated last (remembered on the internal VM).
 */

import { INHIBIT_NODE_SHUTDOWN_LABEL } from '../../../../../shared/api/internal/launcher.js';

/** On the internal VM: the VM's labels and annotations as last propagated (JSON maps), as the original names them. */
export const LAST_PROPAGATED_LABELS = 'internal.virtualization.deckhouse.io/last-propagated-vm-labels';
export const LAST_PROPAGATED_ANNOTATIONS = 'internal.virtualization.deckhouse.io/last-propagated-vm-annotations';

export type StringMap = Record<string, string>;

/**
 * The labels a VM's objects carry from it: its own and, as the original adds them, the node-shutdown
 * inhibitor's (the original's quota-discount labels go only with a runtime overhead in status, which
 * is not computed here).
 */
export function propagatedLabels(labels: StringMap | undefined): StringMap {
  return { ...labels, [INHIBIT_NODE_SHUTDOWN_LABEL]: '' };
}

/** The VM's annotations that are never propagated: our own bookkeeping and kubectl's. */
export function propagatableAnnotations(annotations: StringMap | undefined): StringMap {
  return Object.fromEntries(
    Object.entries(annotations ?? {}).filter(
      ([k]) => k !== LAST_PROPAGATED_LABELS && k !== LAST_PROPAGATED_ANNOTATIONS && !k.startsWith('kubectl.kubernetes.io'),
    ),
  );
}

/** A last-propagated annotation's map; a value that is not a JSON map of strings counts as nothing propagated. */
export function parseLastPropagated(text: string | undefined): { map: StringMap; broken: boolean } {
  if (text === undefined || text === '') return { map: {}, broken: false };
  try {
    const value = JSON.parse(text) as unknown;
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string'))
      return { map: value as StringMap, broken: false };
  } catch {
    // the caller reports it
  }
  return { map: {}, broken: true };
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

/** The keys the VM governs on an internal VM: its own now, and those propagated last time. */
export interface PropagatedKeys {
  labels: ReadonlySet<string>;
  annotations: ReadonlySet<string>;
}

export function propagatedKeys(
  vm: { metadata: { labels?: StringMap | undefined; annotations?: StringMap | undefined } },
  kvvmAnnotations: StringMap | undefined,
): PropagatedKeys {
  const last = (key: string): string[] => Object.keys(parseLastPropagated(kvvmAnnotations?.[key]).map);
  return {
    labels: new Set([...Object.keys(propagatedLabels(vm.metadata.labels)), ...last(LAST_PROPAGATED_LABELS)]),
    annotations: new Set([...Object.keys(propagatableAnnotations(vm.metadata.annotations)), ...last(LAST_PROPAGATED_ANNOTATIONS)]),
  };
}

interface Meta {
  labels?: StringMap | undefined;
  annotations?: StringMap | undefined;
}

/** `meta` without the propagated keys: what the controller itself put there. */
export function withoutPropagated<M extends Meta>(meta: M | undefined, keys: PropagatedKeys): M {
  const drop = (map: StringMap | undefined, set: ReadonlySet<string>): StringMap => Object.fromEntries(Object.entries(map ?? {}).filter(([k]) => !set.has(k)));
  return { ...(meta ?? ({} as M)), labels: drop(meta?.labels, keys.labels), annotations: drop(meta?.annotations, keys.annotations) };
}

/** `current` with its propagated keys taken from `desired` (set or removed), everything else kept. */
export function withPropagatedFrom<M extends Meta>(current: M | undefined, desired: Meta | undefined, keys: PropagatedKeys): M {
  const take = (have: StringMap | undefined, want: StringMap | undefined, set: ReadonlySet<string>): StringMap => {
    const out: StringMap = Object.fromEntries(Object.entries(have ?? {}).filter(([k]) => !set.has(k)));
    for (const k of set) if (want?.[k] !== undefined) out[k] = want[k];
    return out;
  };
  return {
    ...(current ?? ({} as M)),
    labels: take(current?.labels, desired?.labels, keys.labels),
    annotations: take(current?.annotations, desired?.annotations, keys.annotations),
  };
}
