/** Every reconciler the controller runs: adding one is its folder's declaration.ts and one line here. */
import type { ReconcilerDeclaration } from '../declaration.js';
import { cviDeclaration } from './cvi/declaration.js';
import { dvcrGcDeclaration } from './dvcr-gc/declaration.js';
import { evacuationDeclaration } from './evacuation/declaration.js';
import { volumeMigrationDeclaration } from './volume-migration/declaration.js';
import { kubeVirtConfigDeclaration } from './kubevirt-config/declaration.js';
import { leaseDeclaration } from './ipam/lease/declaration.js';
import { vmipDeclaration } from './ipam/vmip/declaration.js';
import { vdSnapshotDeclaration } from './snapshot/vdsnapshot/declaration.js';
import { vmopSnapshotDeclaration } from './snapshot/vmop-snapshot/declaration.js';
import { vmSnapshotDeclaration } from './snapshot/vmsnapshot/declaration.js';
import { vmsopDeclaration } from './snapshot/vmsop/declaration.js';
import { nodeUSBDeviceDeclaration } from './usb/nodeusbdevice/declaration.js';
import { resourceSliceDeclaration } from './usb/resourceslice/declaration.js';
import { usbDeviceDeclaration } from './usb/usbdevice/declaration.js';
import { populatorDeclaration } from './populator/declaration.js';
import { storageProfileDeclaration } from './storageprofile/declaration.js';
import { vdDeclaration } from './vd/declaration.js';
import { viDeclaration } from './vi/declaration.js';
import { vmDeclaration } from './vm/declaration.js';
import { vmbdaDeclaration } from './vmbda/declaration.js';
import { vmClassDeclaration } from './vmclass/declaration.js';
import { vmopDeclaration } from './vmop/declaration.js';
import { poolDeclaration } from './pool/declaration.js';
import { vmmacDeclaration, vmmacLeaseDeclaration } from './mac/declaration.js';

export const reconcilers: readonly ReconcilerDeclaration[] = [
  vmDeclaration,
  vmopDeclaration,
  evacuationDeclaration,
  volumeMigrationDeclaration,
  vmipDeclaration,
  leaseDeclaration,
  vmClassDeclaration,
  viDeclaration,
  cviDeclaration,
  vdDeclaration,
  vmbdaDeclaration,
  storageProfileDeclaration,
  populatorDeclaration,
  vdSnapshotDeclaration,
  vmSnapshotDeclaration,
  vmopSnapshotDeclaration,
  vmsopDeclaration,
  resourceSliceDeclaration,
  nodeUSBDeviceDeclaration,
  usbDeviceDeclaration,
  poolDeclaration,
  vmmacDeclaration,
  vmmacLeaseDeclaration,
  kubeVirtConfigDeclaration,
  dvcrGcDeclaration,
];
