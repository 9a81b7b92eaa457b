/** VirtualDiskSnapshot and VirtualMachineSnapshot condition types and reasons (the original's). */
import { condition } from './define.js';

export const VDSnapshotCondition = {
  VirtualDiskReady: condition('VirtualDiskReady', 'VirtualDiskReady', 'VirtualDiskNotReadyForSnapshotting'),
  VirtualDiskSnapshotReady: condition(
    'VirtualDiskSnapshotReady',
    'WaitingForTheVirtualDisk',
    'PotentiallyInconsistent',
    'Lost',
    'FileSystemFreezing',
    'FileSystemUnfreezing',
    'Snapshotting',
    'VirtualDiskSnapshotReady',
    'VirtualDiskSnapshotFailed',
  ),
} as const;

export const VMSnapshotCondition = {
  VirtualMachineReady: condition('VirtualMachineReady', 'VirtualMachineReady', 'VirtualMachineNotReadyForSnapshotting'),
  VirtualMachineSnapshotReady: condition(
    'VirtualMachineSnapshotReady',
    'WaitingForTheVirtualMachine',
    'BlockDevicesNotReady',
    'PotentiallyInconsistent',
    'VirtualDiskSnapshotLost',
    'FileSystemFreezing',
    'FileSystemUnfreezing',
    'Snapshotting',
    'VirtualMachineSnapshotReady',
    'VirtualMachineSnapshotFailed',
  ),
} as const;

export const VMSOPCondition = {
  Completed: condition(
    'Completed',
    'VirtualMachineSnapshotNotFound',
    'NotApplicableForVirtualMachinePhase',
    'NotReadyToBeExecuted',
    'CreateVirtualMachineInProgress',
    'OperationFailed',
    'OperationCompleted',
  ),
} as const;
