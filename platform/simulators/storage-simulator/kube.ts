/** The objects the storage simulator reads and writes, as far as it reads them (the rest is kept as written). */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../shared/api/k8s/core.js';
import { podDescriptor } from '../../../shared/api/k8s/resource.js';
import { eventDescriptor, eventSchema, type KubeClient, type KubeEvent, type ResourceClient, type ResourceDescriptor } from '../../../shared/kube/index.js';

export const FIELD_MANAGER = 'storage-simulator';
/** Marks the PersistentVolumes the simulator made (value: its instance), so it deletes only those. */
export const PV_LABEL = 'storage-simulator.virtualization.deckhouse.io/instance';

const EnvVarSchema = z.looseObject({ name: z.string(), value: z.string().optional() });
const ContainerSchema = z.looseObject({
  name: z.string(),
  image: z.string().optional(),
  env: z.array(EnvVarSchema).optional(),
  volumeMounts: z.array(z.looseObject({ name: z.string(), mountPath: z.string() })).optional(),
  /** Block claims as devices (the device path in the container). */
  volumeDevices: z.array(z.looseObject({ name: z.string(), devicePath: z.string() })).optional(),
  terminationMessagePath: z.string().optional(),
});

export const PodSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    nodeName: z.string().optional(),
    containers: z.array(ContainerSchema),
    volumes: z.array(z.looseObject({ name: z.string(), persistentVolumeClaim: z.looseObject({ claimName: z.string() }).optional() })).optional(),
  }),
  status: z.looseObject({ phase: z.string().optional(), podIP: z.string().optional() }).optional(),
});
export type Pod = z.infer<typeof PodSchema>;

export const PVCSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    storageClassName: z.string().optional(),
    volumeName: z.string().optional(),
    volumeMode: z.string().optional(),
    accessModes: z.array(z.string()).optional(),
    /** A populator's source: such a claim is not provisioned here (see classes.ts). */
    dataSourceRef: z.looseObject({ apiGroup: z.string().optional(), kind: z.string(), name: z.string() }).optional(),
    resources: z.looseObject({ requests: z.record(z.string(), z.string()).optional() }).optional(),
  }),
  status: z.looseObject({ phase: z.string().optional() }).optional(),
});
export type PVC = z.infer<typeof PVCSchema>;

export const PVSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({
    hostPath: z.looseObject({ path: z.string() }).optional(),
    claimRef: z.looseObject({ name: z.string().optional() }).optional(),
    capacity: z.record(z.string(), z.string()).optional(),
    volumeMode: z.string().optional(),
  }),
  status: z.looseObject({ phase: z.string().optional() }).optional(),
});
export type PV = z.infer<typeof PVSchema>;

export const pvcDescriptor: ResourceDescriptor = {
  group: '',
  version: 'v1',
  plural: 'persistentvolumeclaims',
  kind: 'PersistentVolumeClaim',
  namespaced: true,
};
export const pvDescriptor: ResourceDescriptor = { group: '', version: 'v1', plural: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false };

export const StorageClassSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  provisioner: z.string().optional(),
  volumeBindingMode: z.string().optional(),
  parameters: z.record(z.string(), z.string()).optional(),
});
export type StorageClass = z.infer<typeof StorageClassSchema>;

export interface StorageSimulatorClients {
  pods: ResourceClient<Pod>;
  pvcs: ResourceClient<PVC>;
  pvs: ResourceClient<PV>;
  storageClasses: ResourceClient<StorageClass>;
  events: ResourceClient<KubeEvent>;
}

export function storageSimulatorClients(kube: KubeClient): StorageSimulatorClients {
  return {
    pods: kube.resource(podDescriptor, PodSchema, FIELD_MANAGER),
    pvcs: kube.resource(pvcDescriptor, PVCSchema, FIELD_MANAGER),
    pvs: kube.resource(pvDescriptor, PVSchema, FIELD_MANAGER),
    storageClasses: kube.resource(
      { group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', kind: 'StorageClass', namespaced: false },
      StorageClassSchema,
      FIELD_MANAGER,
    ),
    events: kube.resource(eventDescriptor, eventSchema, FIELD_MANAGER),
  };
}
