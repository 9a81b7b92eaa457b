/** The whole manifest table (see table.ts). */
import { ADDRESS_CASES, INTERNAL_CASES, USB_CASES, VMOP_CASES } from './manifests-other.js';
import { SNAPSHOT_CASES } from './manifests-snapshots.js';
import { STORAGE_CASES, STORAGE_PROFILE_CASES } from './manifests-storage.js';
import { POOL_CASES, VMCLASS_CASES, VM_CASES } from './manifests-vm.js';
import type { ManifestCase } from './table.js';

export const MANIFEST_CASES: readonly ManifestCase[] = [
  ...VM_CASES,
  ...VMCLASS_CASES,
  ...POOL_CASES,
  ...STORAGE_CASES,
  ...STORAGE_PROFILE_CASES,
  ...VMOP_CASES,
  ...ADDRESS_CASES,
  ...USB_CASES,
  ...SNAPSHOT_CASES,
  ...INTERNAL_CASES,
];

/** The manifest exactly as it goes over the wire (undefined fields dropped). */
export function wireForm<T>(manifest: T): T {
  return JSON.parse(JSON.stringify(manifest)) as T;
}
