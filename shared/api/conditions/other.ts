/** Condition types and reasons of the smaller resources. */
import { condition } from './define.js';

export const VMClassCondition = {
  Ready: condition('Ready', 'NoCpuFeaturesEnabled', 'NoSuitableNodesFound', 'SuitableNodesFound'),
  Discovered: condition('Discovered', 'DiscoverySucceeded', 'DiscoverySkip', 'DiscoveryFailed'),
  InUse: condition('InUse', 'VirtualMachineClassInUse'),
} as const;

export const VMBDACondition = {
  BlockDeviceReady: condition('BlockDeviceReady', 'BlockDeviceReady', 'BlockDeviceNotReady'),
  VirtualMachineReady: condition('VirtualMachineReady', 'VirtualMachineReady', 'VirtualMachineNotReady'),
  Attached: condition('Attached', 'Attached', 'NotAttached', 'AttachmentRequestSent', 'Conflict', 'DeviceNotAvailableOnNode'),
  // Sic: the type string itself ends in "Type".
  DiskAttachmentCapacityAvailable: condition('DiskAttachmentCapacityAvailableType', 'CapacityAvailable', 'CapacityReached', 'CapacityUnknown'),
  Terminating: condition('Terminating', 'DetachPending'),
} as const;

const attachedToVM = condition('Attached', 'VirtualMachineNotFound', 'Attached');

export const VMIPCondition = {
  Bound: condition(
    'Bound',
    'VirtualMachineIPAddressIsOutOfTheValidRange',
    'VirtualMachineIPAddressLeaseAlreadyExists',
    'VirtualMachineIPAddressLeaseLost',
    'VirtualMachineIPAddressLeaseNotFound',
    'VirtualMachineIPAddressLeaseNotReady',
    'Bound',
  ),
  Attached: attachedToVM,
} as const;

export const VMIPLeaseCondition = { Bound: condition('Bound', 'Released', 'Bound') } as const;

export const VMMACCondition = {
  Bound: condition(
    'Bound',
    'VirtualMachineMACAddressLeaseAlreadyExists',
    'VirtualMachineMACAddressLeaseLost',
    'VirtualMachineMACAddressLeaseNotFound',
    'VirtualMachineMACAddressLeaseNotReady',
    'Bound',
  ),
  Attached: attachedToVM,
} as const;

export const VMMACLeaseCondition = { Bound: condition('Bound', 'Bound') } as const;

export const VMPoolCondition = {
  Available: condition('Available', 'AllReplicasReady', 'InsufficientReadyReplicas'),
  Progressing: condition('Progressing', 'ReplicasProgressing', 'PoolStable'),
  Synced: condition('Synced', 'PoolSynced', 'RolloutInProgress', 'RestartPendingApproval'),
} as const;

const usbReady = condition('Ready', 'Ready', 'NotReady', 'NotFound');
const usbAttached = condition('Attached', 'AttachedToVirtualMachine', 'Available', 'DetachedForMigration', 'NoFreeUSBIPPort');

export const NodeUSBDeviceCondition = {
  Ready: usbReady,
  Assigned: condition('Assigned', 'Assigned', 'Available', 'InProgress'),
  Attached: usbAttached,
} as const;

export const USBDeviceCondition = { Ready: usbReady, Attached: usbAttached } as const;

/** The condition DVCR garbage collection writes on the Deployment `dvcr` (as the original). */
export const DVCRDeploymentCondition = {
  GarbageCollection: condition('GarbageCollection', 'InProgress', 'Completed', 'Error'),
} as const;
