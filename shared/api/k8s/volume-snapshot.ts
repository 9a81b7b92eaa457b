/**
 * The snapshot.storage.k8s.io/v1 objects of the CSI external-snapshotter that disk snapshots are made
 * of: VolumeSnapshot (namespaced, what the controller creates for a disk's PVC), VolumeSnapshotContent
 * (cluster-scoped, the snapshot controller's binding to the storage) and VolumeSnapshotClass. The
 * schemas are loose: they name what this code reads and writes; the rest is kept as it came.
 */
import { z } from 'zod';
import { ObjectMetaSchema } from './core.js';
import type { ResourceDescriptor } from '../../kube/index.js';

export const SNAPSHOT_API_GROUP = 'snapshot.storage.k8s.io';
export const SNAPSHOT_API_VERSION = 'v1';
export const SNAPSHOT_API = `${SNAPSHOT_API_GROUP}/${SNAPSHOT_API_VERSION}`;

const descriptor = (kind: string, plural: string, namespaced: boolean): ResourceDescriptor => ({
  group: SNAPSHOT_API_GROUP,
  version: SNAPSHOT_API_VERSION,
  plural,
  kind,
  namespaced,
});

export const volumeSnapshotDescriptor = descriptor('VolumeSnapshot', 'volumesnapshots', true);
export const volumeSnapshotContentDescriptor = descriptor('VolumeSnapshotContent', 'volumesnapshotcontents', false);
export const volumeSnapshotClassDescriptor = descriptor('VolumeSnapshotClass', 'volumesnapshotclasses', false);

/** The class annotation the snapshot controller reads to pick a class for a driver when none is named. */
export const DEFAULT_SNAPSHOT_CLASS_ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';

const meta = { apiVersion: z.string().optional(), kind: z.string().optional(), metadata: ObjectMetaSchema };
const snapshotError = z.looseObject({ message: z.string().optional(), time: z.string().optional() });

export const VolumeSnapshotSchema = z.looseObject({
  ...meta,
  spec: z.looseObject({
    source: z.looseObject({
      persistentVolumeClaimName: z.string().optional(),
      volumeSnapshotContentName: z.string().optional(),
    }),
    volumeSnapshotClassName: z.string().optional(),
  }),
  status: z
    .looseObject({
      boundVolumeSnapshotContentName: z.string().optional(),
      creationTime: z.string().optional(),
      readyToUse: z.boolean().optional(),
      restoreSize: z.string().optional(),
      error: snapshotError.optional(),
    })
    .optional(),
});
export type VolumeSnapshot = z.infer<typeof VolumeSnapshotSchema>;

export const VolumeSnapshotContentSchema = z.looseObject({
  ...meta,
  spec: z.looseObject({
    deletionPolicy: z.string(),
    driver: z.string(),
    source: z.looseObject({ volumeHandle: z.string().optional(), snapshotHandle: z.string().optional() }),
    volumeSnapshotClassName: z.string().optional(),
    volumeSnapshotRef: z.looseObject({ name: z.string().optional(), namespace: z.string().optional(), uid: z.string().optional() }),
  }),
  status: z
    .looseObject({
      snapshotHandle: z.string().optional(),
      readyToUse: z.boolean().optional(),
      restoreSize: z.number().optional(),
      creationTime: z.number().optional(),
      error: snapshotError.optional(),
    })
    .optional(),
});
export type VolumeSnapshotContent = z.infer<typeof VolumeSnapshotContentSchema>;

export const VolumeSnapshotClassSchema = z.looseObject({ ...meta, driver: z.string(), deletionPolicy: z.string() });
export type VolumeSnapshotClass = z.infer<typeof VolumeSnapshotClassSchema>;
