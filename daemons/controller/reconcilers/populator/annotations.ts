/**
 * The volume populator's contract on a PersistentVolumeClaim, as the original module writes it on the
 * claims it fills (`service/persistent_volume_claim_service.go`): the annotation
 * `pvc-population-strategy` (`dvcr` or `host-assigned`) with the source in a second annotation, a
 * `dataSourceRef` in the group `virtualization.deckhouse.io` naming the object the claim is filled for
 * (its VirtualDisk or VirtualImage owner, or, for a claim made by hand, the ClusterVirtualImage or
 * VirtualImage it is filled from), and `pvc-population-done: "true"` once filled. Pure.
 *
 * Names: the strategy and done annotations are the original's. The original's source annotations
 * (constants AnnPVCPopulationSourceDVCR, ...SourcePVC, ...SourceFormat) have values the public code we
 * read does not show; ours are `pvc-population-source-dvcr`, `-source-pvc`, `-source-format` under the
 * same prefix (documented in reconcilers/populator/README.md).
 */
import type { PVC } from '../provisioning/kube.js';
import type { ImportSource } from '../provisioning/importer.js';

const PREFIX = 'virtualization.deckhouse.io';
/** `dvcr` (an image in DVCR) or `host-assigned` (another claim of the namespace, copied by an importer Pod). */
export const STRATEGY_ANNOTATION = `${PREFIX}/pvc-population-strategy`;
/** `"true"` once the claim holds the data. */
export const DONE_ANNOTATION = `${PREFIX}/pvc-population-done`;
/** The DVCR image of a `dvcr` population (`docker://<registry>/<repo>:<tag>` or without the scheme). */
export const SOURCE_DVCR_ANNOTATION = `${PREFIX}/pvc-population-source-dvcr`;
/** The format of that image, when the writer knows it (informational: the importer detects it). */
export const SOURCE_FORMAT_ANNOTATION = `${PREFIX}/pvc-population-source-format`;
/** The claim a `host-assigned` population copies (same namespace). */
export const SOURCE_PVC_ANNOTATION = `${PREFIX}/pvc-population-source-pvc`;

export const SOURCE_GROUP = PREFIX;
const SOURCE_KINDS = new Set(['VirtualImage', 'ClusterVirtualImage', 'VirtualDisk']);

/** The object a claim's `dataSourceRef` names (cluster images have no namespace). */
export interface PopulationRef {
  kind: string;
  name: string;
  namespace?: string | undefined;
}

export type Population =
  { kind: 'none' } | { kind: 'done' } | { kind: 'invalid'; message: string } | { kind: 'fill'; ref: PopulationRef; source: ImportSource };

/** What the populator is asked to do for `pvc` (`dvcr`: the image reference given by the annotation, to be made an endpoint). */
export function populationOf(pvc: PVC): Population {
  const ann = pvc.metadata.annotations ?? {};
  const strategy = ann[STRATEGY_ANNOTATION];
  if (strategy === undefined || strategy === '') return { kind: 'none' };
  if (ann[DONE_ANNOTATION] === 'true') return { kind: 'done' };
  const ref = pvc.spec.dataSourceRef;
  if (ref === undefined) return { kind: 'invalid', message: `the claim has ${STRATEGY_ANNOTATION} but no spec.dataSourceRef` };
  if (ref.apiGroup !== SOURCE_GROUP || !SOURCE_KINDS.has(ref.kind)) {
    const what = `${ref.apiGroup === undefined || ref.apiGroup === '' ? 'core' : ref.apiGroup} ${ref.kind}`;
    return { kind: 'invalid', message: `spec.dataSourceRef names a ${what}: it must be a ${SOURCE_GROUP} VirtualImage, ClusterVirtualImage or VirtualDisk` };
  }
  const target = { kind: ref.kind, name: ref.name, namespace: ref.kind === 'ClusterVirtualImage' ? undefined : (ref.namespace ?? pvc.metadata.namespace) };
  if (strategy === 'dvcr') {
    const image = (ann[SOURCE_DVCR_ANNOTATION] ?? '').replace(/^docker:\/\//, '');
    if (image === '') return { kind: 'invalid', message: `strategy dvcr needs the annotation ${SOURCE_DVCR_ANNOTATION}` };
    return { kind: 'fill', ref: target, source: { type: 'registry', image } };
  }
  if (strategy === 'host-assigned') {
    const claimName = ann[SOURCE_PVC_ANNOTATION] ?? '';
    if (claimName === '') return { kind: 'invalid', message: `strategy host-assigned needs the annotation ${SOURCE_PVC_ANNOTATION}` };
    return { kind: 'fill', ref: target, source: { type: 'pvc', claimName } };
  }
  return { kind: 'invalid', message: `population strategy ${strategy} is not supported here (dvcr, host-assigned)` };
}

/** The claim the importer fills before its volume is handed to the target (the original's name). */
export function primeName(target: string): string {
  return `${target}-prime`;
}
