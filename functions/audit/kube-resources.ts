/**
 * The resources enrichment reads, each with a schema that keeps only the fields the record builders
 * use. The informer decodes leniently (it keeps every field it receives), so `trimmed` is its
 * transform: only the schema's fields and the labels and annotations a builder reads reach the store,
 * whatever the size of the real objects (managedFields, last-applied annotations, pod specs). Nothing
 * is written back, so dropping the rest is safe.
 */
import { z } from 'zod';
import { podDescriptor } from '../../shared/api/k8s/resource.js';
import type { KubeObject, ResourceDescriptor } from '../../shared/kube/index.js';
import { CORE_SPEC_CHECKSUM, CORE_SPEC_CHECKSUM_APPLIED } from './kinds/integrity.js';
import { LIBVIRT_VERSION_ANNOTATION, QEMU_VERSION_ANNOTATION } from './kinds/module-component-control.js';
import { LAUNCHER_VM_LABEL } from './kinds/vm-control.js';

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
    descriptor: podDescriptor,
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

/** The only label and annotation keys a record builder reads; the stores keep no other. */
const READ_META_KEYS: ReadonlySet<string> = new Set([
  LAUNCHER_VM_LABEL,
  QEMU_VERSION_ANNOTATION,
  LIBVIRT_VERSION_ANNOTATION,
  CORE_SPEC_CHECKSUM,
  CORE_SPEC_CHECKSUM_APPLIED,
]);

function readKeys(map: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(map)) if (READ_META_KEYS.has(key)) out[key] = map[key] ?? '';
  return out;
}

/**
 * The informer transform for `name`: the object reduced to its view (the schema strips every other
 * field) with only the labels and annotations that are read. An object the schema rejects is left
 * whole (the informer has already decoded it, so this does not happen; it never throws).
 */
export function trimmed<R extends ResourceName>(name: R): <T extends KubeObject>(obj: T) => T {
  const schema: z.ZodObject = resources[name].schema;
  return <T extends KubeObject>(obj: T): T => {
    const parsed = schema.safeParse(obj);
    if (!parsed.success) return obj;
    const view = parsed.data as unknown as T;
    const meta = view.metadata as { labels?: Record<string, string>; annotations?: Record<string, string> };
    if (meta.labels !== undefined) meta.labels = readKeys(meta.labels);
    if (meta.annotations !== undefined) meta.annotations = readKeys(meta.annotations);
    return view;
  };
}
