/** Builders of valid objects and admission requests for tests and benchmarks. */
import type { z } from 'zod';
import { VirtualMachineIPAddressLeaseSchema, VirtualMachineIPAddressSchema } from '../../../shared/api/resources/addresses.js';
import { API_VERSION } from '../../../shared/api/resources/common.js';
import { VirtualDiskSchema } from '../../../shared/api/resources/virtualdisk.js';
import { ClusterVirtualImageSchema, VirtualImageSchema } from '../../../shared/api/resources/virtualimage.js';
import { VirtualMachineSchema } from '../../../shared/api/resources/virtualmachine.js';
import { DEFAULT_CLASS_ANNOTATION, VirtualMachineClassSchema } from '../../../shared/api/resources/virtualmachineclass.js';
import { VirtualMachineBlockDeviceAttachmentSchema } from '../../../shared/api/resources/vmbda.js';
import { VirtualMachineOperationSchema } from '../../../shared/api/resources/vmop.js';
import { VirtualMachinePoolSchema } from '../../../shared/api/resources/vmpool.js';
import type { Operation } from '../decision.js';
import type { AdmissionRequest } from '../review.js';

export const NS = 'ns1';

type In<S extends z.ZodType> = z.input<S>;
export type VmIn = In<typeof VirtualMachineSchema>;
export type ClassIn = In<typeof VirtualMachineClassSchema>;
export type DiskIn = In<typeof VirtualDiskSchema>;
export type ImageIn = In<typeof VirtualImageSchema>;
export type ClusterImageIn = In<typeof ClusterVirtualImageSchema>;
export type VmbdaIn = In<typeof VirtualMachineBlockDeviceAttachmentSchema>;
export type VmipIn = In<typeof VirtualMachineIPAddressSchema>;
export type LeaseIn = In<typeof VirtualMachineIPAddressLeaseSchema>;
export type VmopIn = In<typeof VirtualMachineOperationSchema>;
export type PoolIn = In<typeof VirtualMachinePoolSchema>;

function build<T>(base: T, change?: (o: T) => void): T {
  const copy = structuredClone(base);
  change?.(copy);
  return copy;
}

const meta = (name: string, namespace: string | undefined = NS): { name: string; namespace?: string } =>
  namespace === undefined ? { name } : { name, namespace };

/** A small VM spec that passes every rule against the generic class (also the pool's template). */
const vmSpec = (): VmIn['spec'] => ({
  virtualMachineClassName: 'generic',
  cpu: { cores: 2, coreFraction: '50%' },
  memory: { size: '4Gi' },
  blockDeviceRefs: [{ kind: 'VirtualDisk', name: 'root' }],
});

export const vm = (change?: (o: VmIn) => void): VmIn =>
  build<VmIn>(
    {
      apiVersion: API_VERSION,
      kind: 'VirtualMachine',
      metadata: meta('vm1'),
      spec: vmSpec(),
    },
    change,
  );

/** The class the original installs (`generic`), marked as the default. */
export const vmClass = (change?: (o: ClassIn) => void): ClassIn =>
  build<ClassIn>(
    {
      apiVersion: API_VERSION,
      kind: 'VirtualMachineClass',
      metadata: { name: 'generic', annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } },
      spec: {
        cpu: { type: 'Model', model: 'Nehalem' },
        sizingPolicies: [
          { cores: { min: 1, max: 4 }, coreFractions: [5, 10, 20, 50, 100], memory: { min: '512Mi', max: '32Gi', perCore: { min: '256Mi', max: '16Gi' } } },
          { cores: { min: 5, max: 8 }, coreFractions: [20, 50, 100] },
          { cores: { min: 9, max: 16 }, coreFractions: [50, 100], dedicatedCores: [false, true] },
          { cores: { min: 17, max: 1024 }, coreFractions: [100] },
        ],
      },
    },
    change,
  );

export const disk = (change?: (o: DiskIn) => void): DiskIn =>
  build<DiskIn>({ apiVersion: API_VERSION, kind: 'VirtualDisk', metadata: meta('root'), spec: { persistentVolumeClaim: { size: '10Gi' } } }, change);

export const image = (change?: (o: ImageIn) => void): ImageIn =>
  build<ImageIn>(
    {
      apiVersion: API_VERSION,
      kind: 'VirtualImage',
      metadata: meta('ubuntu'),
      spec: { storage: 'ContainerRegistry', dataSource: { type: 'HTTP', http: { url: 'https://example.com/ubuntu.qcow2' } } },
    },
    change,
  );

export const clusterImage = (change?: (o: ClusterImageIn) => void): ClusterImageIn =>
  build<ClusterImageIn>(
    {
      apiVersion: API_VERSION,
      kind: 'ClusterVirtualImage',
      metadata: meta('ubuntu', undefined),
      spec: { dataSource: { type: 'HTTP', http: { url: 'https://example.com/ubuntu.qcow2' } } },
    },
    change,
  );

export const vmbda = (change?: (o: VmbdaIn) => void): VmbdaIn =>
  build<VmbdaIn>(
    {
      apiVersion: API_VERSION,
      kind: 'VirtualMachineBlockDeviceAttachment',
      metadata: meta('attach-data'),
      spec: { blockDeviceRef: { kind: 'VirtualDisk', name: 'data' }, virtualMachineName: 'vm1' },
    },
    change,
  );

export const vmip = (change?: (o: VmipIn) => void): VmipIn =>
  build<VmipIn>({ apiVersion: API_VERSION, kind: 'VirtualMachineIPAddress', metadata: meta('vm1'), spec: { type: 'Auto' } }, change);

export const lease = (ip: string, change?: (o: LeaseIn) => void): LeaseIn =>
  build<LeaseIn>(
    {
      apiVersion: API_VERSION,
      kind: 'VirtualMachineIPAddressLease',
      metadata: meta(`ip-${ip.replaceAll('.', '-')}`, undefined),
      spec: { virtualMachineIPAddressRef: { name: 'other', namespace: NS } },
      status: { phase: 'Bound' },
    },
    change,
  );

export const vmop = (change?: (o: VmopIn) => void): VmopIn =>
  build<VmopIn>(
    { apiVersion: API_VERSION, kind: 'VirtualMachineOperation', metadata: meta('op1'), spec: { type: 'Restart', virtualMachineName: 'vm1' } },
    change,
  );

export const pool = (change?: (o: PoolIn) => void): PoolIn =>
  build<PoolIn>(
    {
      apiVersion: API_VERSION,
      kind: 'VirtualMachinePool',
      metadata: meta('web'),
      spec: {
        replicas: 3,
        scaleDownPolicy: 'NewestFirst',
        virtualDiskTemplates: [{ name: 'root', spec: { persistentVolumeClaim: { size: '10Gi' } } }],
        virtualMachineTemplate: {
          spec: { ...vmSpec(), osType: 'Generic', liveMigrationPolicy: 'PreferSafe' },
        },
      },
    },
    change,
  );

export const moduleConfig = (settings: Record<string, unknown>, name = 'virtualization'): Record<string, unknown> => ({
  apiVersion: 'deckhouse.io/v1alpha1',
  kind: 'ModuleConfig',
  metadata: { name },
  spec: { enabled: true, version: 1, settings: { dvcr: { storage: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { size: '50Gi' } } }, ...settings } },
});

export interface RequestOptions {
  readonly operation?: Operation;
  readonly oldObject?: unknown;
  readonly username?: string;
  readonly kind?: { group: string; version: string; kind: string };
  readonly subResource?: string;
}

/** An AdmissionRequest for `object`, with kind and names read from the object unless given. */
export function request(object: unknown, opts: RequestOptions = {}): AdmissionRequest {
  const o = (object !== null && typeof object === 'object' ? object : {}) as {
    apiVersion?: unknown;
    kind?: unknown;
    metadata?: { name?: unknown; namespace?: unknown };
  };
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const apiVersion = str(o.apiVersion) ?? '';
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const meta = o.metadata !== null && typeof o.metadata === 'object' ? o.metadata : {};
  const operation = opts.operation ?? (opts.oldObject === undefined ? 'CREATE' : 'UPDATE');
  return {
    uid: 'b3c8f0d2-1111-4a4a-9c9c-000000000001',
    kind: opts.kind ?? { group: group ?? '', version: version ?? '', kind: str(o.kind) ?? '' },
    subResource: opts.subResource,
    name: str(meta.name) ?? '',
    namespace: str(meta.namespace),
    operation,
    userInfo: { username: opts.username ?? 'jane', groups: ['system:authenticated'] },
    object: object as Record<string, unknown> | null,
    oldObject: (opts.oldObject ?? null) as Record<string, unknown> | null,
    dryRun: false,
  };
}

type Out<S extends z.ZodType> = z.output<S>;
type Change<T> = ((o: T) => void) | undefined;

/** Parsed (typed, defaulted) objects for the fake lookups' world. */
export const typed: {
  vm(change?: Change<VmIn>): Out<typeof VirtualMachineSchema>;
  vmClass(change?: Change<ClassIn>): Out<typeof VirtualMachineClassSchema>;
  disk(change?: Change<DiskIn>): Out<typeof VirtualDiskSchema>;
  image(change?: Change<ImageIn>): Out<typeof VirtualImageSchema>;
  clusterImage(change?: Change<ClusterImageIn>): Out<typeof ClusterVirtualImageSchema>;
  vmbda(change?: Change<VmbdaIn>): Out<typeof VirtualMachineBlockDeviceAttachmentSchema>;
  vmip(change?: Change<VmipIn>): Out<typeof VirtualMachineIPAddressSchema>;
  lease(ip: string, change?: Change<LeaseIn>): Out<typeof VirtualMachineIPAddressLeaseSchema>;
  vmop(change?: Change<VmopIn>): Out<typeof VirtualMachineOperationSchema>;
  pool(change?: Change<PoolIn>): Out<typeof VirtualMachinePoolSchema>;
} = {
  vm: (change) => VirtualMachineSchema.parse(vm(change)),
  vmClass: (change) => VirtualMachineClassSchema.parse(vmClass(change)),
  disk: (change) => VirtualDiskSchema.parse(disk(change)),
  image: (change) => VirtualImageSchema.parse(image(change)),
  clusterImage: (change) => ClusterVirtualImageSchema.parse(clusterImage(change)),
  vmbda: (change) => VirtualMachineBlockDeviceAttachmentSchema.parse(vmbda(change)),
  vmip: (change) => VirtualMachineIPAddressSchema.parse(vmip(change)),
  lease: (ip, change) => VirtualMachineIPAddressLeaseSchema.parse(lease(ip, change)),
  vmop: (change) => VirtualMachineOperationSchema.parse(vmop(change)),
  pool: (change) => VirtualMachinePoolSchema.parse(pool(change)),
};
