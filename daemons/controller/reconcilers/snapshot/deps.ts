/**
 * What the snapshot reconcilers (VirtualDiskSnapshot, VirtualMachineSnapshot, their operations) read
 * and write besides the storage reconcilers' objects: the snapshot kinds, the CSI VolumeSnapshots
 * made of disk PVCs, and the Secrets holding a VM's captured spec.
 */
import {
  VirtualMachineSnapshotOperationSchema,
  VirtualMachineSnapshotSchema,
  virtualMachineSnapshot,
  virtualMachineSnapshotOperation,
  type VirtualDiskSnapshot,
  type VirtualMachineSnapshot,
  type VirtualMachineSnapshotOperation,
} from '../../../../shared/api/resources/snapshots.js';
import type { VolumeSnapshot } from '../../../../shared/api/k8s/volume-snapshot.js';
import { descriptorOf, type KubeClient, type ResourceClient } from '../../../../shared/kube/index.js';
import type { ObjectCache } from '../../engine/cache.js';
import { FIELD_MANAGER } from '../../kube/resources.js';
import type { StorageDeps } from '../provisioning/helpers.js';
import { makeStorageClients } from '../provisioning/kube.js';
import type { GuestFilesystems } from './freeze.js';

export interface SnapshotClients {
  vdSnapshots: ResourceClient<VirtualDiskSnapshot>;
  vmSnapshots: ResourceClient<VirtualMachineSnapshot>;
  volumeSnapshots: ResourceClient<VolumeSnapshot>;
  vmsops: ResourceClient<VirtualMachineSnapshotOperation>;
}

export interface SnapshotCaches {
  vdSnapshots: ObjectCache<VirtualDiskSnapshot>;
  vmSnapshots: ObjectCache<VirtualMachineSnapshot>;
  vmsops: ObjectCache<VirtualMachineSnapshotOperation>;
  /** Undefined when the cluster does not serve snapshot.storage.k8s.io/v1 (no CSI snapshot controller). */
  volumeSnapshots: ObjectCache<VolumeSnapshot> | undefined;
}

export interface SnapshotDeps extends StorageDeps {
  snapshots: { clients: SnapshotClients; caches: SnapshotCaches; filesystems: GuestFilesystems };
}

/** The disk-snapshot and VolumeSnapshot clients are the storage reconcilers' (makeStorageClients); the VM snapshots' and operations' are added. */
export function makeSnapshotClients(kube: KubeClient, fieldManager = FIELD_MANAGER): SnapshotClients {
  const { vdSnapshots, volumeSnapshots } = makeStorageClients(kube, fieldManager);
  return {
    vdSnapshots,
    volumeSnapshots,
    vmSnapshots: kube.resource(descriptorOf(virtualMachineSnapshot), VirtualMachineSnapshotSchema, fieldManager),
    vmsops: kube.resource(descriptorOf(virtualMachineSnapshotOperation), VirtualMachineSnapshotOperationSchema, fieldManager),
  };
}
