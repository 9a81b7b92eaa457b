/**
 * The resources enrichment reads, each with a schema that keeps only the fields the record builders
 * use: the informer stores then hold small objects, whatever the size of the real ones. Nothing is
 * written back, so dropping the rest is safe.
 */
import { z } from 'zod';
import type { ResourceDescriptor } from '../../shared/kube/index.js';

const str = z.string().optional();

const meta = z.object({
  name: str,
  namespace: str,
  uid: str,
  resourceVersion: str,
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

/** A schema for a narrow view; `metadata` is required by the informer, the rest is optional. */
function view<S extends z.ZodRawShape>(shape: S): z.ZodObject<{ metadata: typeof meta } & S> {
  return z.object({ metadata: meta, ...shape });
}

const VIRT = { group: 'virtualization.deckhouse.io', version: 'v1alpha2' } as const;
const DECKHOUSE = { group: 'deckhouse.io', version: 'v1alpha1' } as const;

export const resources = {
  vm: {
    descriptor: { ...VIRT, plural: 'virtualmachines', kind: 'VirtualMachine', namespaced: true },
    schema: view({
      spec: z.object({ blockDeviceRefs: z.array(z.object({ kind: str, name: str })).optional() }).optional(),
      status: z
        .object({
          nodeName: str,
          guestOSInfo: z.object({ name: str }).optional(),
          versions: z.object({ qemu: str, libvirt: str }).optional(),
        })
        .optional(),
    }),
  },
  vd: {
    descriptor: { ...VIRT, plural: 'virtualdisks', kind: 'VirtualDisk', namespaced: true },
    schema: view({ status: z.object({ storageClassName: str }).optional() }),
  },
  vmop: {
    descriptor: { ...VIRT, plural: 'virtualmachineoperations', kind: 'VirtualMachineOperation', namespaced: true },
    schema: view({ spec: z.object({ type: str, virtualMachineName: str }).optional() }),
  },
  pod: {
    descriptor: { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
    schema: view({
      spec: z.object({ nodeName: str }).optional(),
      status: z
        .object({
          containerStatuses: z
            .array(
              z.object({
                name: str,
                state: z.object({ terminated: z.object({ message: str }).optional() }).optional(),
              }),
            )
            .optional(),
        })
        .optional(),
    }),
  },
  node: {
    descriptor: { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false },
    schema: view({ status: z.object({ addresses: z.array(z.object({ type: str, address: str })).optional() }).optional() }),
  },
  module: {
    descriptor: { ...DECKHOUSE, plural: 'modules', kind: 'Module', namespaced: false },
    schema: view({ properties: z.object({ version: str }).optional() }),
  },
  moduleConfig: {
    descriptor: { ...DECKHOUSE, plural: 'moduleconfigs', kind: 'ModuleConfig', namespaced: false },
    schema: view({ spec: z.object({ enabled: z.boolean().nullable().optional() }).optional() }),
  },
  internalVMI: {
    descriptor: {
      group: 'internal.virtualization.deckhouse.io',
      version: 'v1',
      plural: 'internalvirtualizationvirtualmachineinstances',
      kind: 'InternalVirtualizationVirtualMachineInstance',
      namespaced: true,
    },
    schema: view({}),
  },
} as const satisfies Record<string, { descriptor: ResourceDescriptor; schema: z.ZodObject }>;

export type ResourceName = keyof typeof resources;
export type ViewOf<R extends ResourceName> = z.infer<(typeof resources)[R]['schema']>;

/** Deleted objects of these resources are kept for a while (audit lines for a delete come later). */
export const KEPT_AFTER_DELETE: ReadonlySet<ResourceName> = new Set(['vm', 'vd', 'pod', 'internalVMI']);
