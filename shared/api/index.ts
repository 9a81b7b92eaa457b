/**
 * The virtualization.deckhouse.io/v1alpha2 API: zod schemas (the single source of truth), inferred
 * types, condition and finalizer constants, the KubeVirt backend subset and the ModuleConfig settings.
 */
export * from './conditions/index.js';
export { Finalizer } from './finalizers.js';
export * from './internal/resources.js';
export type { KubeVirtCondition, VMISpec } from './internal/kubevirt.js';
export type { Condition, LabelSelector, ObjectMeta, OwnerReference, Toleration } from './k8s/core.js';
export { ConditionSchema, ObjectMetaSchema } from './k8s/core.js';
export type { PrinterColumn, ResourceDefinition } from './k8s/crd.js';
export * from './moduleconfig.js';
export { ALL_RESOURCES, INTERNAL_RESOURCES, OWN_CRD_RESOURCES, PUBLIC_RESOURCES, STORAGE_RESOURCES, resourceByKind } from './registry.js';
export * from './resources/addresses.js';
export { API_VERSION, GROUP, VERSION } from './resources/common.js';
export * from './resources/snapshots.js';
export * from './resources/storageprofile.js';
export * from './resources/usb.js';
export * from './resources/virtualdisk.js';
export * from './resources/virtualimage.js';
export * from './resources/virtualmachine.js';
export * from './resources/virtualmachine-spec.js';
export * from './resources/virtualmachine-status.js';
export * from './resources/virtualmachineclass.js';
export * from './resources/vmbda.js';
export * from './resources/vmop.js';
export * from './resources/vmpool.js';
export { check, checkObject, fieldProblems, type Checked } from './validate.js';
