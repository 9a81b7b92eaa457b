/** VirtualImage and ClusterVirtualImage validation. */
import { GROUP } from '../../../shared/api/resources/common.js';
import { ClusterVirtualImageSchema, VirtualImageSchema, type ClusterVirtualImage, type VirtualImage } from '../../../shared/api/resources/virtualimage.js';
import type { Findings } from '../decision.js';
import type { RuleContext } from '../lookups.js';
import { onUpdate, pure, type Check } from './check.js';
import { nameWithoutDots } from './metadata.js';
import { changed, provisioned, specFrozenWhileDeleting, storageClassExists } from './storage.js';
import { schemaParser, type Validator } from './validator.js';

const CLASS_PATH = 'spec.persistentVolumeClaim.storageClassName';

const onPvc = (image: VirtualImage): boolean => image.spec.storage !== 'ContainerRegistry';

const deprecatedStorage: Check<VirtualImage> = pure('the storage type is current', ({ object }, out) => {
  if (object.spec.storage === 'Kubernetes') out.warn('storage Kubernetes is deprecated; use PersistentVolumeClaim', 'spec.storage');
});

const storageClass: Check<VirtualImage> = {
  name: 'a PVC-backed image has a usable storage class',
  run: async ({ object, operation }, ctx, out) => {
    if (operation !== 'CREATE' || !onPvc(object)) return;
    const name = object.spec.persistentVolumeClaim?.storageClassName;
    if (name !== undefined && name !== '') return storageClassExists(name, CLASS_PATH, ctx, out);
    await defaultClassResolvable(ctx, out);
  },
};

/** Without a class in the spec: the module's default for images, else the cluster default StorageClass. */
async function defaultClassResolvable(ctx: RuleContext, out: Findings): Promise<void> {
  const settings = await ctx.lookups.moduleSettings();
  const moduleDefault = settings.virtualImagesDefaultStorageClass;
  if (moduleDefault !== undefined && moduleDefault !== '') {
    if ((await ctx.lookups.storageClass(moduleDefault)) === undefined) {
      out.deny(CLASS_PATH, `is empty and the module default StorageClass ${moduleDefault} (virtualImages.defaultStorageClassName) does not exist`);
    }
    return;
  }
  const classes = await ctx.lookups.storageClasses();
  if (!classes.some((c) => c.isDefault)) {
    out.deny(CLASS_PATH, 'is empty and there is no default StorageClass: set it, or the module virtualImages.defaultStorageClassName');
  }
}

const fixedOnceProvisioned = onUpdate<VirtualImage>('data source and storage class are fixed once provisioning began', ({ object }, old, _ctx, out) => {
  if (!provisioned(old.status)) return;
  if (changed(object.spec.dataSource, old.spec.dataSource)) out.deny('spec.dataSource', 'is immutable once the image is provisioned');
  if (changed(object.spec.persistentVolumeClaim?.storageClassName, old.spec.persistentVolumeClaim?.storageClassName)) {
    out.deny(CLASS_PATH, 'is immutable once the image is provisioned');
  }
  if (object.spec.storage !== old.spec.storage) out.deny('spec.storage', 'is immutable once the image is provisioned');
});

export const virtualImageValidator: Validator<VirtualImage> = {
  group: GROUP,
  kind: 'VirtualImage',
  parse: schemaParser(VirtualImageSchema),
  checks: [nameWithoutDots('VirtualImage', 'warn'), deprecatedStorage, storageClass, fixedOnceProvisioned, specFrozenWhileDeleting('VirtualImage')],
};

const readyIsFinal = onUpdate<ClusterVirtualImage>('the spec of a Ready image does not change', ({ object }, old, _ctx, out) => {
  if (old.status?.phase === 'Ready' && changed(object.spec, old.spec)) out.deny('spec', 'cannot change once the ClusterVirtualImage is Ready');
});

export const clusterVirtualImageValidator: Validator<ClusterVirtualImage> = {
  group: GROUP,
  kind: 'ClusterVirtualImage',
  parse: schemaParser(ClusterVirtualImageSchema),
  checks: [nameWithoutDots('ClusterVirtualImage', 'warn'), readyIsFinal],
};
