/**
 * What a StorageClass's provisioner can give, as the original module knows it (its table, inherited
 * from CDI's storage capabilities): the claim property sets a new StorageProfile gets, most preferred
 * first. An unknown provisioner gets the original's conservative default (ReadWriteOnce, Filesystem
 * or Block). Pure: the reconciler and the disk/image reconcilers read it.
 */
import type { AccessMode, ClaimPropertySet, VolumeMode } from '../../../../shared/api/resources/storageprofile.js';

/** `<access mode>/<volume mode>` with the short names rwo, rox, rwx and fs, block. */
type Pair = `${'rwo' | 'rox' | 'rwx'}/${'fs' | 'block'}`;

const ACCESS: Record<string, AccessMode> = { rwo: 'ReadWriteOnce', rox: 'ReadOnlyMany', rwx: 'ReadWriteMany' };
const VOLUME: Record<string, VolumeMode> = { fs: 'Filesystem', block: 'Block' };

const RBD: Pair[] = ['rwx/block', 'rwo/block', 'rwo/fs'];
const ALL_BUT_RWX_FS: Pair[] = ['rwx/block', 'rwo/block', 'rwo/fs', 'rox/block', 'rox/fs'];
const ALL_FS: Pair[] = ['rwx/fs', 'rwo/fs', 'rox/fs'];
const RWO_BOTH: Pair[] = ['rwo/block', 'rwo/fs'];
const RWO_FS: Pair[] = ['rwo/fs'];
const RWX_FS: Pair[] = ['rwx/fs'];
const RWO_BLOCK: Pair[] = ['rwo/block'];

const byProvisioner: Record<string, Pair[]> = {
  // Deckhouse's own storage.
  'replicated.csi.storage.deckhouse.io': ALL_BUT_RWX_FS,
  'local.csi.storage.deckhouse.io': RWO_BOTH,
  'scsi-generic.csi.storage.deckhouse.io': ALL_BUT_RWX_FS,
  'linstor.csi.linbit.com': ALL_BUT_RWX_FS,
  // Ceph.
  'kubernetes.io/rbd': RBD,
  'rbd.csi.ceph.com': RBD,
  'rook-ceph.rbd.csi.ceph.com': RBD,
  'cephfs.csi.ceph.com': RWX_FS,
  // NFS and host paths.
  'nfs.csi.k8s.io': RWX_FS,
  'k8s-sigs.io/nfs-subdir-external-provisioner': RWX_FS,
  'kubevirt.io/hostpath-provisioner': RWO_FS,
  'kubevirt.io.hostpath-provisioner': RWO_FS,
  'k8s.io/minikube-hostpath': RWO_FS,
  'topolvm.io': RWO_BOTH,
  'topolvm.cybozu.com': RWO_BOTH,
  // Clouds.
  'ebs.csi.aws.com': RWO_BLOCK,
  'kubernetes.io/aws-ebs': RWO_BLOCK,
  'efs.csi.aws.com': ['rwx/fs', 'rwo/fs'],
  'disk.csi.azure.com': RWO_BLOCK,
  'file.csi.azure.com': RWX_FS,
  'pd.csi.storage.gke.io': RWO_BLOCK,
  'cinder.csi.openstack.org': RWO_BOTH,
  'manila.csi.openstack.org': RWX_FS,
  'csi.vsphere.vmware.com': ['rwo/block', 'rwo/fs'],
  'driver.longhorn.io': RWO_BLOCK,
  'csi.huawei.com': ALL_BUT_RWX_FS,
  'csi.huawei.com/nfs': ALL_FS,
  // Ours: the local platform's classes. Their volumes are directories filled by the importer program,
  // so they are offered as Filesystem claims (an edited profile may still ask for Block).
  'kubernetes.io/no-provisioner': RWO_FS,
  'simulated.storage.virtualization.deckhouse.io': RWO_FS,
};

const toSet = (p: Pair): ClaimPropertySet => {
  const [a, v] = p.split('/') as [string, string];
  return { accessModes: [ACCESS[a] ?? 'ReadWriteOnce'], volumeMode: VOLUME[v] ?? 'Filesystem' };
};

/** The original's default for a provisioner it does not know. */
export const DEFAULT_SETS: readonly ClaimPropertySet[] = [toSet('rwo/fs'), toSet('rwo/block')];

/** The claim property sets known for `provisioner`, or undefined when it is not in the table. */
export function knownSets(provisioner: string): ClaimPropertySet[] | undefined {
  return byProvisioner[provisioner]?.map(toSet);
}

/** The sets a profile of a class with `provisioner` states when its spec names none. */
export function detectedSets(provisioner: string): ClaimPropertySet[] {
  return knownSets(provisioner) ?? DEFAULT_SETS.map((s) => ({ ...s, accessModes: [...s.accessModes] }));
}

/** The volume modes a known provisioner gives, or undefined when it is not known (then nothing is refused). */
export function volumeModesOf(provisioner: string): VolumeMode[] | undefined {
  const sets = knownSets(provisioner);
  return sets === undefined ? undefined : [...new Set(sets.map((s) => s.volumeMode))];
}
