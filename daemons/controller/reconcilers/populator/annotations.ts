/**
 * The volume populator's contract on a PersistentVolumeClaim, with the original module's annotation
 * names: a claim whose `dataSourceRef` names a virtualization.deckhouse.io object and which carries a
 * population strategy is filled by the controller, then marked done. Pure.
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
/** The claim a `host-assigned` population copies. */
export const SOURCE_PVC_ANNOTATION = `${PREFIX}/pvc-population-source-pvc`;

export const SOURCE_GROUP = PREFIX;
const SOURCE_KINDS = new Set(['VirtualImage', 'ClusterVirtualImage', 'VirtualDisk']);

export type Population =
  | { kind: 'none' }
  | { kind: 'done' }
  | { kind: 'invalid'; message: string }
  | { kind: 'fill'; ref: { kind: string; name: string; namespace?: string | undefined }; source: ImportSource };

/** What the populator is asked to do for `pvc` (`dvcr`: the image reference given by the annotation, to be made an endpoint). */
export function populationOf(pvc: PVC): Population {
  const ann = pvc.metadata.annotations ?? {};
  const strategy = ann[STRATEGY_ANNOTATION];
  const ref = pvc.spec.dataSourceRef;
  if (strategy === undefined || strategy === '' || ref?.apiGroup !== SOURCE_GROUP) return { kind: 'none' };
  if (ann[DONE_ANNOTATION] === 'true') return { kind: 'done' };
  if (!SOURCE_KINDS.has(ref.kind))
    return { kind: 'invalid', message: `dataSourceRef kind ${ref.kind} is not a VirtualImage, ClusterVirtualImage or VirtualDisk` };
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
