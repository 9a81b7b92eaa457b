/** Every full object, by kind (several per kind where fields exclude each other). */
import { FULL_ADDRESSES, FULL_INTERNAL, FULL_OPERATIONS, FULL_USB } from './full-other.js';
import { FULL_SNAPSHOTS } from './full-snapshots.js';
import { FULL_ATTACHMENTS, FULL_CLUSTER_IMAGES, FULL_DISKS, FULL_IMAGES, FULL_STORAGE_PROFILES } from './full-storage.js';
import { FULL_CLASSES, FULL_POOLS, FULL_VMS } from './full-vm.js';

export type FullObject = { apiVersion: string; kind: string; metadata: { name: string }; spec?: unknown; status?: unknown };

export const FULL_OBJECTS: readonly FullObject[] = [
  ...FULL_VMS,
  ...FULL_CLASSES,
  ...FULL_POOLS,
  ...FULL_DISKS,
  ...FULL_IMAGES,
  ...FULL_CLUSTER_IMAGES,
  ...FULL_ATTACHMENTS,
  ...FULL_STORAGE_PROFILES,
  ...FULL_OPERATIONS,
  ...FULL_ADDRESSES,
  ...FULL_USB,
  ...FULL_SNAPSHOTS,
  ...FULL_INTERNAL,
];
