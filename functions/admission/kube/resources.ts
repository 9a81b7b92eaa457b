/**
 * The resources the admission function reads: our own kinds with their shared/api schemas, and narrow
 * views of core and foreign kinds (only the fields rules read; nothing is written back).
 */
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../shared/api/k8s/core.js';
import { kubeObjectSchema, type ResourceDescriptor } from '../../../shared/kube/index.js';
import { SDN_GROUP, SDN_VERSION } from '../lookups.js';

const core = (plural: string, kind: string, namespaced: boolean, group = '', version = 'v1'): ResourceDescriptor => ({
  group,
  version,
  plural,
  kind,
  namespaced,
});

export const STORAGE_CLASS = core('storageclasses', 'StorageClass', false, 'storage.k8s.io');
export const NODE = core('nodes', 'Node', false);
export const PVC = core('persistentvolumeclaims', 'PersistentVolumeClaim', true);
export const MODULE_CONFIG = core('moduleconfigs', 'ModuleConfig', false, 'deckhouse.io', 'v1alpha1');
export const NETWORK = core('networks', 'Network', true, SDN_GROUP, SDN_VERSION);
export const CLUSTER_NETWORK = core('clusternetworks', 'ClusterNetwork', false, SDN_GROUP, SDN_VERSION);
export const SYSTEM_NETWORK = core('systemnetworks', 'SystemNetwork', false, SDN_GROUP, SDN_VERSION);

export const IS_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';

export const StorageClassView = z.looseObject({ metadata: ObjectMetaSchema, provisioner: z.string().optional() });
export const NodeView = z.looseObject({
  metadata: ObjectMetaSchema,
  status: z.looseObject({ addresses: z.array(z.looseObject({ type: z.string(), address: z.string() })).optional() }).optional(),
});
export const PvcView = z.looseObject({
  metadata: ObjectMetaSchema,
  spec: z
    .looseObject({
      storageClassName: z.string().nullish(),
      accessModes: z.array(z.string()).optional(),
      resources: z.looseObject({ requests: z.record(z.string(), z.union([z.string(), z.number()])).optional() }).optional(),
    })
    .optional(),
});
export const ConditionsView = z.looseObject({
  metadata: ObjectMetaSchema,
  status: z.looseObject({ conditions: z.array(z.looseObject({ type: z.string(), status: z.string() })).optional() }).optional(),
});
export const AnyObject = kubeObjectSchema;
