/**
 * IP and MAC addresses of VMs: VirtualMachineIPAddress (vmip) and VirtualMachineMACAddress (vmmac) in
 * the VM namespace, and their cluster-wide leases (vmipl, vmmacl) whose names encode the address, so
 * that each address is taken at most once.
 */
import { z } from 'zod';
import { AGE_COLUMN, type ResourceDefinition } from '../k8s/crd.js';
import { API_VERSION, conditions, observedGeneration, rootSchema, publicNames } from './common.js';

const addressStatusShape = {
  address: z.string().optional().describe('The address in use.'),
  virtualMachineName: z.string().optional().describe('The VM using the address.'),
  phase: z.enum(['Pending', 'Bound', 'Attached']).optional().describe('Current phase of the address.'),
  conditions: conditions(),
  observedGeneration: observedGeneration(),
};

const addressRef = (what: string) =>
  z
    .strictObject({
      name: z.string().describe(`Name of the ${what}; empty once the lease is released.`),
      namespace: z.string().describe(`Namespace of the ${what}.`),
    })
    .describe(`The ${what} holding the lease.`);

export const VirtualMachineIPAddressSchema = rootSchema(
  API_VERSION,
  'VirtualMachineIPAddress',
  z
    .strictObject({
      type: z.enum(['Auto', 'Static']).describe('Auto: take a free address from virtualMachineCIDRs; Static: use staticIP.'),
      staticIP: z.string().optional().describe('The requested address for type Static.'),
    })
    .default({ type: 'Auto' })
    .describe('Desired address; a bare object (no spec) is an automatic address.'),
  z.strictObject(addressStatusShape).describe('Observed state of the address.'),
);
export type VirtualMachineIPAddress = z.infer<typeof VirtualMachineIPAddressSchema>;

export const VirtualMachineIPAddressLeaseSchema = rootSchema(
  API_VERSION,
  'VirtualMachineIPAddressLease',
  z
    .strictObject({ virtualMachineIPAddressRef: addressRef('VirtualMachineIPAddress').optional() })
    .default({})
    .describe('The holder of the lease; the lease name encodes the IP (ip-10-0-0-5).'),
  z
    .strictObject({
      phase: z.enum(['Bound', 'Released']).optional().describe('Current phase of the lease.'),
      conditions: conditions(),
      observedGeneration: observedGeneration(),
    })
    .describe('Observed state of the lease.'),
);
export type VirtualMachineIPAddressLease = z.infer<typeof VirtualMachineIPAddressLeaseSchema>;

export const VirtualMachineMACAddressSchema = rootSchema(
  API_VERSION,
  'VirtualMachineMACAddress',
  z
    .strictObject({
      address: z
        .string()
        .regex(/^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$/)
        .optional()
        .describe('The requested MAC address; one is generated when empty.'),
    })
    .default({})
    .describe('Desired address; a bare object (no spec) gets a generated address.'),
  z.strictObject(addressStatusShape).describe('Observed state of the address.'),
);
export type VirtualMachineMACAddress = z.infer<typeof VirtualMachineMACAddressSchema>;

export const VirtualMachineMACAddressLeaseSchema = rootSchema(
  API_VERSION,
  'VirtualMachineMACAddressLease',
  z
    .strictObject({ virtualMachineMACAddressRef: addressRef('VirtualMachineMACAddress').optional() })
    .default({})
    .describe('The holder of the lease; the lease name encodes the MAC (mac-aa-bb-cc-dd-ee-ff).'),
  z
    .strictObject({
      phase: z.enum(['Bound']).optional().describe('Current phase of the lease.'),
      conditions: conditions(),
      observedGeneration: observedGeneration(),
    })
    .describe('Observed state of the lease.'),
);
export type VirtualMachineMACAddressLease = z.infer<typeof VirtualMachineMACAddressLeaseSchema>;

const phaseColumn = { name: 'Status', type: 'string', jsonPath: '.status.phase' } as const;

export const virtualMachineIPAddress: ResourceDefinition<typeof VirtualMachineIPAddressSchema> = {
  ...publicNames('VirtualMachineIPAddress', 'virtualmachineipaddresses', 'Namespaced', ['vmip']),
  description: 'An IP address of a virtual machine from the module virtualMachineCIDRs.',
  schema: VirtualMachineIPAddressSchema,
  printerColumns: [
    { name: 'Address', type: 'string', jsonPath: '.status.address' },
    phaseColumn,
    { name: 'VM', type: 'string', jsonPath: '.status.virtualMachineName' },
    AGE_COLUMN,
  ],
};

export const virtualMachineIPAddressLease: ResourceDefinition<typeof VirtualMachineIPAddressLeaseSchema> = {
  ...publicNames('VirtualMachineIPAddressLease', 'virtualmachineipaddressleases', 'Cluster', ['vmipl', 'vmiplease']),
  description: 'The cluster-wide claim on one IP address; its name encodes the address.',
  schema: VirtualMachineIPAddressLeaseSchema,
  printerColumns: [{ name: 'VirtualMachineIPAddress', type: 'string', jsonPath: '.spec.virtualMachineIPAddressRef' }, phaseColumn, AGE_COLUMN],
};

export const virtualMachineMACAddress: ResourceDefinition<typeof VirtualMachineMACAddressSchema> = {
  ...publicNames('VirtualMachineMACAddress', 'virtualmachinemacaddresses', 'Namespaced', ['vmmac']),
  description: 'A MAC address of a virtual machine network interface.',
  schema: VirtualMachineMACAddressSchema,
  printerColumns: [
    { name: 'Address', type: 'string', jsonPath: '.status.address' },
    phaseColumn,
    { name: 'VM', type: 'string', jsonPath: '.status.virtualMachineName' },
    AGE_COLUMN,
  ],
};

export const virtualMachineMACAddressLease: ResourceDefinition<typeof VirtualMachineMACAddressLeaseSchema> = {
  ...publicNames('VirtualMachineMACAddressLease', 'virtualmachinemacaddressleases', 'Cluster', ['vmmacl', 'vmmaclease']),
  description: 'The cluster-wide claim on one MAC address; its name encodes the address.',
  schema: VirtualMachineMACAddressLeaseSchema,
  printerColumns: [{ name: 'VirtualMachineMACAddress', type: 'string', jsonPath: '.spec.virtualMachineMACAddressRef' }, phaseColumn, AGE_COLUMN],
};
