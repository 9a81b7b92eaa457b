/** VirtualDisk validation: name, size, storage class, and what may change once the disk exists. */
import { GROUP } from '../../../shared/api/resources/common.js';
import { VirtualDiskSchema, type VirtualDisk } from '../../../shared/api/resources/virtualdisk.js';
import type { Findings } from '../decision.js';
import { formatBytes, parseQuantity } from '../../../shared/api/k8s/quantity.js';
import type { RuleContext, StorageClassView } from '../lookups.js';
import { onCreate, onUpdate, pure, type Check } from './check.js';
import { nameWithoutDots } from './metadata.js';
import { changed, diskSizeProblems, provisioned, specFrozenWhileDeleting, storageClassExists } from './storage.js';
import { schemaParser, type Validator } from './validator.js';

const SIZE_PATH = 'spec.persistentVolumeClaim.size';
const CLASS_PATH = 'spec.persistentVolumeClaim.storageClassName';

const size: Check<VirtualDisk> = pure('the size is set and positive', ({ object }, out) => diskSizeProblems(object.spec, 'spec', out));

const source: Check<VirtualDisk> = onCreate({
  name: 'the image source suits a disk',
  run: async ({ object, namespace }, { lookups }, out) => {
    const ref = object.spec.dataSource?.objectRef;
    if (ref === undefined || ref.kind === 'VirtualDiskSnapshot') return;
    const image = ref.kind === 'VirtualImage' ? await lookups.virtualImage(namespace ?? '', ref.name) : await lookups.clusterVirtualImage(ref.name);
    if (image?.status?.cdrom === true)
      out.warn(`${ref.kind} ${ref.name} is an ISO image; ISO images are not supported as a disk source`, 'spec.dataSource.objectRef');
    const unpacked = Number(image?.status?.size?.unpackedBytes ?? Number.NaN);
    const requested = parseQuantity(object.spec.persistentVolumeClaim?.size);
    if (requested !== undefined && Number.isFinite(unpacked) && requested < unpacked) {
      out.warn(`is smaller than the unpacked image (${formatBytes(unpacked)}); the disk will be enlarged to fit it`, SIZE_PATH);
    }
  },
});

/** The class a new disk gets: its own, the module's default for disks, or the cluster default. */
async function targetClass(disk: VirtualDisk, ctx: RuleContext): Promise<StorageClassView | undefined> {
  const named = disk.spec.persistentVolumeClaim?.storageClassName ?? (await ctx.lookups.moduleSettings()).virtualDisksDefaultStorageClass;
  if (named !== undefined && named !== '') return ctx.lookups.storageClass(named);
  return (await ctx.lookups.storageClasses()).find((c) => c.isDefault);
}

const sameProvisioner: Check<VirtualDisk> = onCreate({
  name: 'a disk copied from a PVC-backed image uses the same provisioner',
  run: async ({ object, namespace }, ctx, out) => {
    const ref = object.spec.dataSource?.objectRef;
    if (ref?.kind !== 'VirtualImage') return;
    const image = await ctx.lookups.virtualImage(namespace ?? '', ref.name);
    const sourceName = image?.status?.storageClassName;
    if (image === undefined || image.spec.storage === 'ContainerRegistry' || sourceName === undefined || sourceName === '') return;
    const [source, target] = await Promise.all([ctx.lookups.storageClass(sourceName), targetClass(object, ctx)]);
    if (source === undefined || target === undefined || source.provisioner === target.provisioner) return;
    out.deny(
      CLASS_PATH,
      `StorageClass ${target.name} (provisioner ${target.provisioner}) cannot take a copy of VirtualImage ${ref.name} on ${source.name} (provisioner ${source.provisioner})`,
    );
  },
});

const sizeChanges = onUpdate<VirtualDisk>('the size changes only in allowed ways', ({ object }, old, _ctx, out) => {
  const now = object.spec.persistentVolumeClaim?.size;
  const before = old.spec.persistentVolumeClaim?.size;
  if (before === undefined || now === before) return;
  if (now === undefined) {
    out.deny(SIZE_PATH, 'cannot be removed once set');
    return;
  }
  if (old.status?.phase === 'Migrating') out.deny(SIZE_PATH, 'cannot change while the disk is migrating');
  const [n, b] = [parseQuantity(now), parseQuantity(before)];
  if (provisioned(old.status) && n !== undefined && b !== undefined && n < b) {
    out.deny(SIZE_PATH, `cannot be decreased (from ${String(before)} to ${String(now)}) once the disk is provisioned`);
  }
});

const dataSourceFixed = onUpdate<VirtualDisk>('the data source is fixed once provisioning began', ({ object }, old, _ctx, out) => {
  if (provisioned(old.status) && changed(object.spec.dataSource, old.spec.dataSource)) {
    out.deny('spec.dataSource', 'is immutable once the disk is provisioned');
  }
});

const storageClass: Check<VirtualDisk> = {
  name: 'the storage class exists and changes only in allowed ways',
  run: async ({ object, oldObject, operation }, ctx, out) => {
    const name = object.spec.persistentVolumeClaim?.storageClassName;
    if (operation === 'CREATE') return storageClassExists(name, CLASS_PATH, ctx, out);
    if (oldObject === undefined || name === oldObject.spec.persistentVolumeClaim?.storageClassName) return;
    if (!provisioned(oldObject.status)) return storageClassExists(name, CLASS_PATH, ctx, out);
    classChange(object, oldObject, ctx, out);
    return storageClassExists(name, CLASS_PATH, ctx, out);
  },
};

/** After provisioning a class change is a volume migration: EE only, for a disk in use by a running VM. */
function classChange(disk: VirtualDisk, old: VirtualDisk, ctx: RuleContext, out: Findings): void {
  const target = disk.spec.persistentVolumeClaim?.storageClassName;
  if (old.status?.phase === 'Migrating') {
    const source = old.status.storageClassName;
    if (target !== source) out.deny(CLASS_PATH, `while the disk migrates it can only be set back to ${source ?? 'its source class'}`);
    return;
  }
  if (ctx.cluster.edition === 'CE') {
    out.deny(CLASS_PATH, 'cannot change once the disk is provisioned: volume migration is not available in the CE edition');
  } else if (!(old.status?.attachedToVirtualMachines ?? []).some((a) => a.mounted === true)) {
    out.deny(CLASS_PATH, 'can change only for a disk mounted to a running VM (the change is a live volume migration)');
  }
}

export const virtualDiskValidator: Validator<VirtualDisk> = {
  group: GROUP,
  kind: 'VirtualDisk',
  parse: schemaParser(VirtualDiskSchema),
  checks: [
    nameWithoutDots('VirtualDisk', 'warn'),
    size,
    source,
    sameProvisioner,
    sizeChanges,
    dataSourceFixed,
    storageClass,
    specFrozenWhileDeleting('VirtualDisk'),
  ],
};
