/**
 * The simulated StorageClasses of the local platform and what each can give (SIMULATED storage): a
 * class states its access modes and volume modes in its parameters (`accessModes`, `volumeModes`,
 * comma-separated), and the provisioner gives a claim a volume only if the class offers what the claim
 * asks, and, for `WaitForFirstConsumer`, once the scheduler has picked the consumer's node
 * (`volume.kubernetes.io/selected-node`), the volume then pinned to that node.
 */
import type { PVC } from './kube.js';

/** The provisioner name of the added simulated classes (no kube-controller-manager plugin: the simulator provisions). */
export const SIMULATED_PROVISIONER = 'simulated.storage.virtualization.deckhouse.io';
/** The default class: ReadWriteOnce, Immediate. */
export const SIMULATED_STORAGE_CLASS = 'local-simulated';
/** ReadWriteMany and ReadOnlyMany besides ReadWriteOnce, Filesystem and Block, Immediate: as Deckhouse's recommended storage. */
export const SIMULATED_RWX_CLASS = 'local-simulated-rwx';
/** ReadWriteOnce, bound when a first consumer is scheduled. */
export const SIMULATED_WFFC_CLASS = 'local-simulated-wffc';
export const SELECTED_NODE = 'volume.kubernetes.io/selected-node';

export interface StorageClassLike {
  metadata: { name?: string | undefined };
  provisioner?: string | undefined;
  volumeBindingMode?: string | undefined;
  parameters?: Record<string, string> | undefined;
}

const DEFAULT_ACCESS = ['ReadWriteOnce', 'ReadWriteOncePod'];
const DEFAULT_VOLUME = ['Filesystem', 'Block'];
const list = (v: string | undefined, fallback: string[]): string[] =>
  v === undefined
    ? fallback
    : v
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '');

/** What a class gives (undeclared: ReadWriteOnce(Pod), Filesystem and Block). */
export function capabilityOf(cls: StorageClassLike): { accessModes: string[]; volumeModes: string[] } {
  return { accessModes: list(cls.parameters?.['accessModes'], DEFAULT_ACCESS), volumeModes: list(cls.parameters?.['volumeModes'], DEFAULT_VOLUME) };
}

export type ProvisionDecision = { act: 'provision'; node?: string | undefined } | { act: 'wait'; why: string } | { act: 'refuse'; why: string };

/** Whether a claim of `cls` gets a volume now. */
export function decide(pvc: PVC, cls: StorageClassLike): ProvisionDecision {
  // As an external provisioner does: a claim whose dataSourceRef names an object of another API group
  // (not a PVC, not a VolumeSnapshot) is a populator's to fill; the populator provisions a claim of its own.
  const ref = pvc.spec.dataSourceRef;
  const group = ref?.apiGroup ?? '';
  if (ref !== undefined && group !== '' && group !== 'snapshot.storage.k8s.io')
    return { act: 'wait', why: `waiting for the populator of ${group} ${ref.kind}` };
  const can = capabilityOf(cls);
  const name = cls.metadata.name ?? '';
  const missing = (pvc.spec.accessModes ?? ['ReadWriteOnce']).filter((m) => !can.accessModes.includes(m));
  if (missing.length > 0)
    return { act: 'refuse', why: `StorageClass ${name} cannot give access mode ${missing.join(', ')} (it gives ${can.accessModes.join(', ')})` };
  const mode = pvc.spec.volumeMode ?? 'Filesystem';
  if (!can.volumeModes.includes(mode))
    return { act: 'refuse', why: `StorageClass ${name} cannot give volume mode ${mode} (it gives ${can.volumeModes.join(', ')})` };
  if (cls.volumeBindingMode !== 'WaitForFirstConsumer') return { act: 'provision' };
  const node = pvc.metadata.annotations?.[SELECTED_NODE];
  if (node === undefined || node === '') return { act: 'wait', why: 'waiting for the first consumer to be scheduled' };
  return { act: 'provision', node };
}

const storageClass = (name: string, binding: string, parameters: Record<string, string>, isDefault = false): Record<string, unknown> => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name, ...(isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}) },
  // The default class keeps the static provisioner name it always had (a class's provisioner cannot change);
  // WaitForFirstConsumer needs a dynamic one, or the scheduler never picks a node for the claim.
  provisioner: isDefault ? 'kubernetes.io/no-provisioner' : SIMULATED_PROVISIONER,
  ...(Object.keys(parameters).length === 0 ? {} : { parameters }),
  volumeBindingMode: binding,
  allowVolumeExpansion: true,
  reclaimPolicy: 'Retain',
});

/** The classes `npm start` creates; the simulator provisions their claims. */
export const SIMULATED_STORAGE_CLASSES: readonly Record<string, unknown>[] = [
  // Exactly as it always was (parameters and provisioner cannot change on a kept cluster): the undeclared modes.
  storageClass(SIMULATED_STORAGE_CLASS, 'Immediate', {}, true),
  storageClass(SIMULATED_RWX_CLASS, 'Immediate', { accessModes: 'ReadWriteOnce,ReadWriteOncePod,ReadWriteMany,ReadOnlyMany', volumeModes: 'Filesystem,Block' }),
  storageClass(SIMULATED_WFFC_CLASS, 'WaitForFirstConsumer', { accessModes: 'ReadWriteOnce,ReadWriteOncePod', volumeModes: 'Filesystem,Block' }),
];

/** Their names. */
export const SIMULATED_CLASS_NAMES: readonly string[] = [SIMULATED_STORAGE_CLASS, SIMULATED_RWX_CLASS, SIMULATED_WFFC_CLASS];
