/** VirtualMachine condition types and reasons. */
import { condition } from './define.js';

export const VMCondition = {
  IPAddressReady: condition(
    'VirtualMachineIPAddressReady',
    'VirtualMachineIPAddressReady',
    'VirtualMachineIPAddressNotReady',
    'VirtualMachineIPAddressNotAssigned',
    'VirtualMachineIPAddressNotAvailable',
  ),
  MACAddressReady: condition(
    'VirtualMachineMACAddressReady',
    'VirtualMachineMACAddressReady',
    'VirtualMachineMACAddressNotReady',
    'VirtualMachineMACAddressNotAvailable',
  ),
  ClassReady: condition('VirtualMachineClassReady', 'VirtualMachineClassReady', 'VirtualMachineClassNotReady'),
  BlockDevicesReady: condition(
    'BlockDevicesReady',
    'BlockDevicesReady',
    'WaitingForWaitForFirstConsumerBlockDevicesToBeReady',
    'BlockDevicesNotReady',
    'BlockDeviceLimitExceeded',
  ),
  Running: condition(
    'Running',
    'NotRunning',
    'Running',
    'NoBootableDevice',
    'InternalVirtualMachineError',
    'PodNotStarted',
    'PodVolumeErrors',
    'PodContainerCreating',
    'PodTerminating',
    'PodNotFound',
    'PodConditionMissing',
    'GuestNotRunning',
  ),
  Migrating: condition('Migrating', 'Pending', 'ReadyToMigrate', 'InProgress'),
  Migratable: condition('Migratable', 'VirtualMachineMigratable', 'NonMigratable', 'DisksNotMigratable', 'DisksShouldBeMigrating', 'HostDevicesNotMigratable'),
  ProvisioningReady: condition('ProvisioningReady', 'ProvisioningReady', 'ProvisioningNotReady', 'ProvisioningReadyWithWarnings'),
  AgentReady: condition('AgentReady', 'AgentReady', 'AgentNotReady'),
  AgentVersionNotSupported: condition('AgentVersionNotSupported', 'AgentVersionSupported', 'AgentVersionNotSupported'),
  ConfigurationApplied: condition('ConfigurationApplied', 'ConfigurationApplied', 'ConfigurationNotApplied'),
  AwaitingRestartToApplyConfiguration: condition('AwaitingRestartToApplyConfiguration', 'UnexpectedState', 'ChangesPendingRestart', 'NoRestartRequired'),
  FilesystemFrozen: condition('FilesystemFrozen', 'Frozen'),
  Snapshotting: condition('Snapshotting', 'WaitingForTheSnapshotToStart', 'SnapshottingInProgress'),
  SizingPolicyMatched: condition(
    'SizingPolicyMatched',
    'SizingPolicyMatched',
    'SizingPolicyNotMatched',
    'VirtualMachineClassTerminating',
    'VirtualMachineClassNotFound',
  ),
  FirmwareUpToDate: condition('FirmwareUpToDate', 'FirmwareUpToDate', 'FirmwareOutOfDate'),
  EvictionRequired: condition('EvictionRequired', 'EvictionRequired'),
  NetworkReady: condition('NetworkReady', 'NetworkReady', 'NetworkNotReady', 'SDNModuleDisabled'),
  Maintenance: condition('Maintenance', 'RestoreInProgress'),
  /** The original's USB handler: True when every device of spec.usbDevices is ready, else SomeDevicesNotReady. */
  USBDeviceReady: condition('USBDeviceReady', 'USBDeviceReady', 'SomeDevicesNotReady'),
  GPUClassReady: condition('GPUClassReady', 'GPUClassReady', 'GPUClassNotFound', 'GPUClassNotReady'),
  /**
   * Ours, not the original's: present (False) only while KubeVirt cannot take the VM: virt-api or the
   * apiserver refused the internal VM built from it, or KubeVirt's configuration lacks what it needs.
   */
  KubeVirtReady: condition('KubeVirtReady', 'InternalVirtualMachineRefused', 'KubeVirtConfigurationIncomplete'),
  CoreFractionAutoscaling: condition(
    'CoreFractionAutoscaling',
    'CoreFractionAutoscalingEnabled',
    'WaitingForRecommendation',
    'CoreFractionAutoscalingDisabled',
    'InPlaceResizeDisabled',
    'SizingPolicyHasNoSteps',
  ),
} as const;
