/**
 * Finalizers of the module. Protection finalizers sit on objects that others reference and keep them
 * until the referrers are gone; cleanup finalizers sit on the resource itself until the controller has
 * removed what it created.
 */
const p = 'virtualization.deckhouse.io/';

export const Finalizer = {
  // Protection (on referenced objects).
  cviProtection: `${p}cvi-protection`,
  viProtection: `${p}vi-protection`,
  vdProtection: `${p}vd-protection`,
  /** Deprecated. */
  kvvmProtection: `${p}kvvm-protection`,
  vmipProtection: `${p}vmip-protection`,
  /** On virt-launcher pods. */
  podProtection: `${p}pod-protection`,
  /** On PVCs backing VM volumes until the KVVM, KVVMI and launcher pods are gone. */
  pvcProtection: `${p}pvc-protection`,
  /** On VolumeSnapshots. */
  vdSnapshotProtection: `${p}vdsnapshot-protection`,
  /** On VolumeSnapshots. */
  vmSnapshotProtection: `${p}vmsnapshot-protection`,
  vmopProtectionByEvacuationController: `${p}vmop-protection-by-evacuation-controller`,
  /** Unused. */
  vmopProtectionByVMController: `${p}vmop-protection-by-vm-controller`,
  // Cleanup (on the resource itself).
  cviCleanup: `${p}cvi-cleanup`,
  vdCleanup: `${p}vd-cleanup`,
  viCleanup: `${p}vi-cleanup`,
  /** Also used on VirtualMachineClass. */
  vmCleanup: `${p}vm-cleanup`,
  /** Unused: VirtualMachineClass carries vm-cleanup. */
  vmClassCleanup: `${p}vmclass-cleanup`,
  vmipCleanup: `${p}vmip-cleanup`,
  vmiplCleanup: `${p}vmipl-cleanup`,
  vdSnapshotCleanup: `${p}vdsnapshot-cleanup`,
  vmopCleanup: `${p}vmop-cleanup`,
  vmsopCleanup: `${p}vmsop-cleanup`,
  vmbdaCleanup: `${p}vmbda-cleanup`,
  vmmacCleanup: `${p}vmmac-cleanup`,
  vmmaclCleanup: `${p}vmmacl-cleanup`,
  nodeUSBDeviceCleanup: `${p}nodeusbdevice-cleanup`,
  usbDeviceCleanup: `${p}usbdevice-cleanup`,
} as const;
