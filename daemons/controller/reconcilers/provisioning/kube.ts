/**
 * The Kubernetes objects the storage reconcilers (vi, cvi, vd, vmbda) read and write besides the
 * module's own resources: PersistentVolumeClaims, StorageClasses, the importer and uploader Pods,
 * the uploader Services, and the attachments. Loose schemas: the apiserver owns the fields not listed.
 */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../../shared/api/k8s/core.js';
import {
  VirtualMachineBlockDeviceAttachmentSchema,
  virtualMachineBlockDeviceAttachment,
  type VirtualMachineBlockDeviceAttachment,
} from '../../../../shared/api/resources/vmbda.js';
import { descriptorOf, type KubeClient, type ResourceClient, type ResourceDescriptor } from '../../../../shared/kube/index.js';
import { FIELD_MANAGER } from '../../kube/resources.js';
import { VolumeSnapshotSchema, volumeSnapshotDescriptor, type VolumeSnapshot } from '../../../../shared/api/k8s/volume-snapshot.js';
import { VirtualDiskSnapshotSchema, virtualDiskSnapshot, type VirtualDiskSnapshot } from '../../../../shared/api/resources/snapshots.js';
import { StorageProfileSchema, storageProfile, type StorageProfile } from '../../../../shared/api/resources/storageprofile.js';

const meta = { apiVersion: z.string().optional(), kind: z.string().optional(), metadata: ObjectMetaSchema };
const kubeCondition = z.looseObject({ type: z.string(), status: z.string(), reason: z.string().optional(), message: z.string().optional() });

export const PVCSchema = z.looseObject({
  ...meta,
  spec: z.looseObject({
    accessModes: z.array(z.string()).optional(),
    storageClassName: z.string().optional(),
    volumeMode: z.string().optional(),
    volumeName: z.string().optional(),
    /** A VolumeSnapshot to fill the claim from (a disk restored from a VirtualDiskSnapshot). */
    dataSource: z.looseObject({ apiGroup: z.string().optional(), kind: z.string(), name: z.string() }).optional(),
    /** A populator's source (a virtualization.deckhouse.io object); the claim is filled by the module's populator. */
    dataSourceRef: z.looseObject({ apiGroup: z.string().optional(), kind: z.string(), name: z.string(), namespace: z.string().optional() }).optional(),
    resources: z.looseObject({ requests: z.record(z.string(), z.string()).optional() }).optional(),
  }),
  status: z
    .looseObject({
      phase: z.string().optional(),
      capacity: z.record(z.string(), z.string()).optional(),
      conditions: z.array(kubeCondition).optional(),
    })
    .optional(),
});
export type PVC = z.infer<typeof PVCSchema>;

/** A PersistentVolume: only its claim reference (the populator hands a filled volume from one claim to another). */
export const PVSchema = z.looseObject({
  ...meta,
  spec: z.looseObject({
    claimRef: z.looseObject({ namespace: z.string().optional(), name: z.string().optional(), uid: z.string().optional() }).optional(),
  }),
});
export type PV = z.infer<typeof PVSchema>;

export const StorageClassSchema = z.looseObject({
  ...meta,
  provisioner: z.string(),
  volumeBindingMode: z.string().optional(),
  allowVolumeExpansion: z.boolean().optional(),
});
export type StorageClass = z.infer<typeof StorageClassSchema>;

const terminated = z.looseObject({ exitCode: z.number().optional(), message: z.string().optional(), reason: z.string().optional() });

/** An importer or uploader Pod: what the controller writes (spec) and reads (phase, termination). */
export const HelperPodSchema = z.looseObject({
  ...meta,
  spec: z.looseObject({}).optional(),
  status: z
    .looseObject({
      phase: z.string().optional(),
      podIP: z.string().optional(),
      message: z.string().optional(),
      containerStatuses: z.array(z.looseObject({ name: z.string(), state: z.looseObject({ terminated: terminated.optional() }).optional() })).optional(),
    })
    .optional(),
});
export type HelperPod = z.infer<typeof HelperPodSchema>;

export const ServiceSchema = z.looseObject({ ...meta, spec: z.looseObject({}).optional() });
export type Service = z.infer<typeof ServiceSchema>;

export const ConfigMapSchema = z.looseObject({ ...meta, data: z.record(z.string(), z.string()).optional() });
export type ConfigMap = z.infer<typeof ConfigMapSchema>;

const core = (plural: string, kind: string, namespaced = true): ResourceDescriptor => ({ group: '', version: 'v1', plural, kind, namespaced });

export interface StorageClients {
  pvcs: ResourceClient<PVC>;
  pvs: ResourceClient<PV>;
  storageClasses: ResourceClient<StorageClass>;
  helperPods: ResourceClient<HelperPod>;
  services: ResourceClient<Service>;
  configMaps: ResourceClient<ConfigMap>;
  vmbdas: ResourceClient<VirtualMachineBlockDeviceAttachment>;
  /** Disk snapshots and their VolumeSnapshots (the data source of a disk restored from a snapshot). */
  vdSnapshots: ResourceClient<VirtualDiskSnapshot>;
  volumeSnapshots: ResourceClient<VolumeSnapshot>;
  /** One per StorageClass: the claim property sets disks and images use. */
  storageProfiles: ResourceClient<StorageProfile>;
}

export function makeStorageClients(kube: KubeClient, fieldManager = FIELD_MANAGER): StorageClients {
  return {
    pvcs: kube.resource(core('persistentvolumeclaims', 'PersistentVolumeClaim'), PVCSchema, fieldManager),
    pvs: kube.resource(core('persistentvolumes', 'PersistentVolume', false), PVSchema, fieldManager),
    storageClasses: kube.resource(
      { group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', kind: 'StorageClass', namespaced: false },
      StorageClassSchema,
      fieldManager,
    ),
    helperPods: kube.resource(core('pods', 'Pod'), HelperPodSchema, fieldManager),
    services: kube.resource(core('services', 'Service'), ServiceSchema, fieldManager),
    configMaps: kube.resource(core('configmaps', 'ConfigMap'), ConfigMapSchema, fieldManager),
    vmbdas: kube.resource(descriptorOf(virtualMachineBlockDeviceAttachment), VirtualMachineBlockDeviceAttachmentSchema, fieldManager),
    vdSnapshots: kube.resource(descriptorOf(virtualDiskSnapshot), VirtualDiskSnapshotSchema, fieldManager),
    volumeSnapshots: kube.resource(volumeSnapshotDescriptor, VolumeSnapshotSchema, fieldManager),
    storageProfiles: kube.resource(descriptorOf(storageProfile), StorageProfileSchema, fieldManager),
  };
}

/** The annotation the default StorageClass carries. */
export const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';

/** The class a new volume gets: the one named, else the cluster default (undefined when neither exists). */
export function pickStorageClass(classes: readonly StorageClass[], named: string | undefined): StorageClass | undefined {
  if (named !== undefined && named !== '') return classes.find((c) => c.metadata.name === named);
  return classes.find((c) => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true');
}
