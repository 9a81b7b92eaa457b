/**
 * The renamed KubeVirt resources (InternalVirtualization*): typed objects for our code and permissive
 * CRDs, matching the embedded CRDs of the original module, for tests.
 */
import type { z } from 'zod';
import { AGE_COLUMN, conditionColumn, type ResourceDefinition } from '../k8s/crd.js';
import { rootSchema } from '../resources/common.js';
import {
  CDISpecSchema,
  CDIStatusSchema,
  KVVMSpecSchema,
  KVVMStatusSchema,
  KubeVirtSpecSchema,
  KubeVirtStatusSchema,
  VMIMSpecSchema,
  VMIMStatusSchema,
  VMISpecSchema,
  VMIStatusSchema,
} from './kubevirt.js';

export const INTERNAL_GROUP = 'internal.virtualization.deckhouse.io';
export const INTERNAL_VERSION = 'v1';
export const INTERNAL_API_VERSION = `${INTERNAL_GROUP}/${INTERNAL_VERSION}`;
export const CDI_GROUP = 'cdi.internal.virtualization.deckhouse.io';
export const CDI_API_VERSION = `${CDI_GROUP}/v1beta1`;

export const InternalVirtualMachineSchema = rootSchema(INTERNAL_API_VERSION, 'InternalVirtualizationVirtualMachine', KVVMSpecSchema, KVVMStatusSchema);
export type InternalVirtualMachine = z.infer<typeof InternalVirtualMachineSchema>;

export const InternalVirtualMachineInstanceSchema = rootSchema(
  INTERNAL_API_VERSION,
  'InternalVirtualizationVirtualMachineInstance',
  VMISpecSchema,
  VMIStatusSchema,
);
export type InternalVirtualMachineInstance = z.infer<typeof InternalVirtualMachineInstanceSchema>;

export const InternalVirtualMachineInstanceMigrationSchema = rootSchema(
  INTERNAL_API_VERSION,
  'InternalVirtualizationVirtualMachineInstanceMigration',
  VMIMSpecSchema,
  VMIMStatusSchema,
);
export type InternalVirtualMachineInstanceMigration = z.infer<typeof InternalVirtualMachineInstanceMigrationSchema>;

export const InternalKubeVirtSchema = rootSchema(INTERNAL_API_VERSION, 'InternalVirtualizationKubeVirt', KubeVirtSpecSchema, KubeVirtStatusSchema);
export type InternalKubeVirt = z.infer<typeof InternalKubeVirtSchema>;

export const InternalCDISchema = rootSchema(CDI_API_VERSION, 'InternalVirtualizationCDI', CDISpecSchema, CDIStatusSchema);
export type InternalCDI = z.infer<typeof InternalCDISchema>;

/** A renamed KubeVirt resource: kind prefix InternalVirtualization, plural prefix internalvirtualization. */
const renamed = (upstreamKind: string, shortNames: string[] = []) =>
  ({
    group: INTERNAL_GROUP,
    version: INTERNAL_VERSION,
    scope: 'Namespaced',
    categories: ['intvirt'],
    permissive: true,
    kind: `InternalVirtualization${upstreamKind}`,
    plural: `internalvirtualization${upstreamKind.toLowerCase()}s`,
    singular: `internalvirtualization${upstreamKind.toLowerCase()}`,
    shortNames,
  }) as const;

export const internalVirtualMachine: ResourceDefinition<typeof InternalVirtualMachineSchema> = {
  ...renamed('VirtualMachine', ['intvirtvm']),
  description: 'KubeVirt VirtualMachine (renamed): the backend object of a VirtualMachine.',
  schema: InternalVirtualMachineSchema,
  statusSubresource: true,
  printerColumns: [AGE_COLUMN, { name: 'Status', type: 'string', jsonPath: '.status.printableStatus' }, conditionColumn('Ready', 'Ready')],
};

export const internalVirtualMachineInstance: ResourceDefinition<typeof InternalVirtualMachineInstanceSchema> = {
  ...renamed('VirtualMachineInstance', ['intvirtvmi']),
  description: 'KubeVirt VirtualMachineInstance (renamed): a running virtual machine.',
  schema: InternalVirtualMachineInstanceSchema,
  // As upstream: no status subresource, status is written with the object.
  statusSubresource: false,
  printerColumns: [
    AGE_COLUMN,
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'IP', type: 'string', jsonPath: '.status.interfaces[0].ipAddress' },
    { name: 'NodeName', type: 'string', jsonPath: '.status.nodeName' },
    conditionColumn('Ready', 'Ready'),
    conditionColumn('Live-Migratable', 'LiveMigratable', 1),
    conditionColumn('Paused', 'Paused', 1),
  ],
};

export const internalVirtualMachineInstanceMigration: ResourceDefinition<typeof InternalVirtualMachineInstanceMigrationSchema> = {
  ...renamed('VirtualMachineInstanceMigration', ['intvirtvmim', 'intvirtvmims']),
  description: 'KubeVirt VirtualMachineInstanceMigration (renamed): one live migration of a VMI.',
  schema: InternalVirtualMachineInstanceMigrationSchema,
  statusSubresource: true,
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'VMI', type: 'string', jsonPath: '.spec.vmiName' },
  ],
};

export const internalKubeVirt: ResourceDefinition<typeof InternalKubeVirtSchema> = {
  ...renamed('KubeVirt'),
  description: 'KubeVirt installation and configuration (renamed); the module renders the object named config.',
  schema: InternalKubeVirtSchema,
  statusSubresource: true,
  labels: { 'app.kubernetes.io/component': 'kubevirt' },
  printerColumns: [AGE_COLUMN, { name: 'Phase', type: 'string', jsonPath: '.status.phase' }],
};

export const internalCDI: ResourceDefinition<typeof InternalCDISchema> = {
  ...renamed('CDI', ['intvirtcdi']),
  group: CDI_GROUP,
  version: 'v1beta1',
  scope: 'Cluster',
  description: 'Containerized Data Importer installation (renamed); unused, kept as in the original module.',
  schema: InternalCDISchema,
  statusSubresource: true,
  printerColumns: [AGE_COLUMN, { name: 'Phase', type: 'string', jsonPath: '.status.phase' }],
};
