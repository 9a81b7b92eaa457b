/** VirtualDisk, VirtualImage and ClusterVirtualImage rules: one conforming and one violating case each. */
import { emptyWorld, type World } from '../testing/fake-lookups.js';
import { clusterImage, disk, image, typed, type DiskIn, type ImageIn } from '../testing/objects.js';
import { ruleTable } from '../testing/rule-table.js';
import { virtualDiskValidator } from './virtualdisk.js';
import { clusterVirtualImageValidator, virtualImageValidator } from './virtualimage.js';

function storageWorld(): World {
  const w = emptyWorld();
  w.storageClasses.push({ name: 'fast', provisioner: 'csi.example', isDefault: false }, { name: 'slow', provisioner: 'csi.example', isDefault: false });
  return w;
}

const sized = (size: string | undefined, change?: (o: DiskIn) => void): DiskIn =>
  disk((o) => {
    o.spec.persistentVolumeClaim = size === undefined ? {} : { size };
    change?.(o);
  });
const phase =
  (p: string, change?: (o: DiskIn) => void) =>
  (o: DiskIn): void => {
    o.status = { phase: p as 'Ready' };
    change?.(o);
  };
const withClass =
  (name: string) =>
  (o: DiskIn | ImageIn): void => {
    o.spec.persistentVolumeClaim = { ...o.spec.persistentVolumeClaim, storageClassName: name };
  };
const deleting = (o: { metadata: { deletionTimestamp?: string } }): void => void (o.metadata.deletionTimestamp = '2026-01-01T00:00:00Z');
const pvcImage = (w: World): void => {
  w.storageClasses.push({ name: 'other-csi', provisioner: 'csi.other', isDefault: false });
  w.images.push(typed.image((i) => void ((i.spec.storage = 'PersistentVolumeClaim'), (i.status = { phase: 'Ready', storageClassName: 'slow' }))));
};
const fromImage = (o: DiskIn): void => void (o.spec.dataSource = { type: 'ObjectRef', objectRef: { kind: 'VirtualImage', name: 'ubuntu' } });

ruleTable(virtualDiskValidator, storageWorld, [
  {
    rule: 'a new disk name has no dots',
    good: { object: disk((o) => void (o.metadata.name = 'root-disk')) },
    bad: { object: disk((o) => void (o.metadata.name = 'root.disk')) },
    expect: { deny: 'metadata.name', message: /must not contain '.'/ },
  },
  {
    rule: 'an existing disk name with dots is warned about',
    good: { object: disk(), old: disk() },
    bad: { object: disk((o) => void (o.metadata.name = 'root.disk')), old: disk((o) => void (o.metadata.name = 'root.disk')) },
    expect: { warn: /must not contain '.'/ },
  },
  {
    rule: 'a blank disk has a size',
    good: { object: sized('1Gi') },
    bad: { object: sized(undefined) },
    expect: { deny: 'spec.persistentVolumeClaim.size', message: /required for a blank disk/ },
  },
  {
    rule: 'the size is positive',
    good: { object: sized('1') },
    bad: { object: sized('0') },
    expect: { deny: 'spec.persistentVolumeClaim.size', message: /greater than 0/ },
  },
  {
    rule: 'a size below the unpacked image is warned about',
    good: {
      object: sized('20Gi', fromImage),
      world: (w) => void w.images.push(typed.image((i) => void (i.status = { phase: 'Ready', size: { unpackedBytes: String(10 * 2 ** 30) } }))),
    },
    bad: {
      object: sized('5Gi', fromImage),
      world: (w) => void w.images.push(typed.image((i) => void (i.status = { phase: 'Ready', size: { unpackedBytes: String(10 * 2 ** 30) } }))),
    },
    expect: { warn: /smaller than the unpacked image \(10Gi\)/ },
  },
  {
    rule: 'an ISO image as the source is warned about',
    good: { object: sized('20Gi', fromImage), world: (w) => void w.images.push(typed.image((i) => void (i.status = { phase: 'Ready', cdrom: false }))) },
    bad: { object: sized('20Gi', fromImage), world: (w) => void w.images.push(typed.image((i) => void (i.status = { phase: 'Ready', cdrom: true }))) },
    expect: { warn: /ISO images are not supported as a disk source/ },
  },
  {
    rule: 'a disk copied from a PVC-backed image uses the same provisioner',
    good: { object: sized('20Gi', (o) => void (fromImage(o), withClass('fast')(o))), world: pvcImage },
    bad: { object: sized('20Gi', (o) => void (fromImage(o), withClass('other-csi')(o))), world: pvcImage },
    expect: {
      deny: 'spec.persistentVolumeClaim.storageClassName',
      message: /StorageClass other-csi \(provisioner csi.other\) cannot take a copy of VirtualImage ubuntu on slow/,
    },
  },
  {
    rule: 'a provisioned disk does not shrink',
    good: { object: sized('20Gi'), old: sized('10Gi', phase('Ready')) },
    bad: { object: sized('5Gi'), old: sized('10Gi', phase('Ready')) },
    expect: { deny: 'spec.persistentVolumeClaim.size', message: /cannot be decreased \(from 10Gi to 5Gi\)/ },
  },
  {
    rule: 'the size stays set once set',
    good: { object: sized('10Gi', fromImage), old: sized('10Gi', fromImage) },
    bad: { object: sized(undefined, fromImage), old: sized('10Gi', fromImage) },
    expect: { deny: 'spec.persistentVolumeClaim.size', message: /cannot be removed once set/ },
  },
  {
    rule: 'the size does not change during a migration',
    good: { object: sized('10Gi'), old: sized('10Gi', phase('Migrating')) },
    bad: { object: sized('20Gi'), old: sized('10Gi', phase('Migrating')) },
    expect: { deny: 'spec.persistentVolumeClaim.size', message: /while the disk is migrating/ },
  },
  {
    rule: 'the data source is fixed once provisioning began',
    good: { object: sized('10Gi', fromImage), old: sized('10Gi', fromImage) },
    bad: { object: sized('10Gi', fromImage), old: sized('10Gi', phase('Provisioning')) },
    expect: { deny: 'spec.dataSource', message: /immutable once the disk is provisioned/ },
  },
  {
    rule: 'a named storage class exists',
    good: { object: sized('10Gi', withClass('fast')) },
    bad: { object: sized('10Gi', withClass('missing')) },
    expect: { deny: 'spec.persistentVolumeClaim.storageClassName', message: /StorageClass missing does not exist/ },
  },
  {
    rule: 'the storage class of a provisioned disk changes only for a mounted disk',
    good: {
      object: sized('10Gi', withClass('slow')),
      old: sized(
        '10Gi',
        phase('Ready', (o) => void (withClass('fast')(o), o.status && (o.status.attachedToVirtualMachines = [{ name: 'vm1', mounted: true }]))),
      ),
    },
    bad: { object: sized('10Gi', withClass('slow')), old: sized('10Gi', phase('Ready', withClass('fast'))) },
    expect: { deny: 'spec.persistentVolumeClaim.storageClassName', message: /mounted to a running VM/ },
  },
  {
    rule: 'a migrating disk only rolls back to its source class',
    good: {
      object: sized('10Gi', withClass('fast')),
      old: sized(
        '10Gi',
        phase('Migrating', (o) => void (withClass('slow')(o), o.status && (o.status.storageClassName = 'fast'))),
      ),
    },
    bad: {
      object: sized('10Gi', withClass('slow')),
      old: sized(
        '10Gi',
        phase('Migrating', (o) => void (withClass('other')(o), o.status && (o.status.storageClassName = 'fast'))),
      ),
    },
    expect: { deny: 'spec.persistentVolumeClaim.storageClassName', message: /set back to fast/ },
  },
  {
    rule: 'the spec does not change while the disk is deleted',
    good: { object: sized('10Gi', deleting), old: sized('10Gi', deleting) },
    bad: { object: sized('20Gi', deleting), old: sized('10Gi', deleting) },
    expect: { deny: 'spec', message: /while the VirtualDisk is being deleted/ },
  },
]);

const onPvc = (change?: (o: ImageIn) => void) =>
  image((o) => {
    o.spec.storage = 'PersistentVolumeClaim';
    change?.(o);
  });

ruleTable(virtualImageValidator, storageWorld, [
  {
    rule: 'a new image name has no dots',
    good: { object: image((o) => void (o.metadata.name = 'ubuntu-22')) },
    bad: { object: image((o) => void (o.metadata.name = 'ubuntu.22')) },
    expect: { deny: 'metadata.name', message: /must not contain '.'/ },
  },
  {
    rule: 'storage Kubernetes is warned about as deprecated',
    good: { object: onPvc(withClass('fast')) },
    bad: { object: image((o) => void ((o.spec.storage = 'Kubernetes'), withClass('fast')(o))) },
    expect: { warn: /storage Kubernetes is deprecated/ },
  },
  {
    rule: 'a named storage class exists',
    good: { object: onPvc(withClass('fast')) },
    bad: { object: onPvc(withClass('missing')) },
    expect: { deny: 'spec.persistentVolumeClaim.storageClassName', message: /StorageClass missing does not exist/ },
  },
  {
    rule: 'without a named class a default class resolves',
    good: { object: onPvc(), world: (w) => void w.storageClasses.push({ name: 'default', provisioner: 'csi.example', isDefault: true }) },
    bad: { object: onPvc() },
    expect: { deny: 'spec.persistentVolumeClaim.storageClassName', message: /no default StorageClass/ },
  },
  {
    rule: 'the module default class for images exists',
    good: { object: onPvc(), world: (w) => void (w.settings = { ...w.settings, virtualImagesDefaultStorageClass: 'fast' }) },
    bad: { object: onPvc(), world: (w) => void (w.settings = { ...w.settings, virtualImagesDefaultStorageClass: 'gone' }) },
    expect: { deny: 'spec.persistentVolumeClaim.storageClassName', message: /module default StorageClass gone/ },
  },
  {
    rule: 'data source and class are fixed once provisioning began',
    good: { object: onPvc(withClass('slow')), old: onPvc((o) => void (withClass('fast')(o), (o.status = { phase: 'Pending' }))) },
    bad: { object: onPvc(withClass('slow')), old: onPvc((o) => void (withClass('fast')(o), (o.status = { phase: 'Ready' }))) },
    expect: { deny: 'spec.persistentVolumeClaim.storageClassName', message: /immutable once the image is provisioned/ },
  },
  {
    rule: 'the spec does not change while the image is deleted',
    good: { object: image(deleting), old: image(deleting) },
    bad: { object: image((o) => void (deleting(o), (o.spec.dataSource = { type: 'Upload' }))), old: image(deleting) },
    expect: { deny: 'spec', message: /while the VirtualImage is being deleted/ },
  },
]);

ruleTable(clusterVirtualImageValidator, storageWorld, [
  {
    rule: 'a new cluster image name has no dots',
    good: { object: clusterImage() },
    bad: { object: clusterImage((o) => void (o.metadata.name = 'ubuntu.22')) },
    expect: { deny: 'metadata.name', message: /must not contain '.'/ },
  },
  {
    rule: 'the spec of a Ready cluster image does not change',
    good: { object: clusterImage((o) => void (o.spec.dataSource = { type: 'Upload' })), old: clusterImage((o) => void (o.status = { phase: 'Provisioning' })) },
    bad: { object: clusterImage((o) => void (o.spec.dataSource = { type: 'Upload' })), old: clusterImage((o) => void (o.status = { phase: 'Ready' })) },
    expect: { deny: 'spec', message: /once the ClusterVirtualImage is Ready/ },
  },
]);
