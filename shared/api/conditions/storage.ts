/** VirtualDisk, VirtualImage and ClusterVirtualImage condition types and reasons. */
import { condition } from './define.js';

const PROVISIONING = [
  'WaitForUserUpload',
  'WaitForUserUploadTimeout',
  'Provisioning',
  'ProvisioningNotStarted',
  'ProvisioningFailed',
  'ProvisioningFailedTerminally',
  // Held while DVCR garbage collection runs (the original's postpone handler).
  'ProvisioningPostponed',
  'Ready',
] as const;

const IMAGE_DATASOURCE = [
  'DatasourceReady',
  'ContainerRegistrySecretNotFound',
  'ImageNotReady',
  'ClusterImageNotReady',
  'VirtualDiskNotReady',
  'VirtualDiskSnapshotNotReady',
  'VirtualDiskNotReadyForUse',
  'VirtualDiskAttachedToVirtualMachine',
] as const;

const inUseByVM = condition('InUse', 'AttachedToVirtualMachine', 'NotInUse');
const terminating = condition('Terminating', 'CleanupPending');

export const VDCondition = {
  DatasourceReady: condition(
    'DatasourceReady',
    'DatasourceReady',
    'ContainerRegistrySecretNotFound',
    'ImageNotReady',
    'ClusterImageNotReady',
    // Sic: the reason for a snapshot that is not ready.
    'VirtualDiskSnapshot',
    'ImageNotFound',
    'ClusterImageNotFound',
  ),
  Ready: condition(
    'Ready',
    ...PROVISIONING,
    'WaitingForFirstConsumer',
    'PVCLost',
    'Exporting',
    'QuotaExceeded',
    'ImagePullFailed',
    'DatasourceIsNotReady',
    'DatasourceIsNotFound',
    'StorageClassIsNotReady',
    'StorageClassProvisionerMismatch',
  ),
  Resizing: condition('Resizing', 'InProgress', 'NotAvailable'),
  Snapshotting: condition('Snapshotting', 'Snapshotting', 'NotAvailable'),
  StorageClassReady: condition('StorageClassReady', 'StorageClassReady', 'StorageClassNotReady'),
  InUse: condition('InUse', 'UsedForImageCreation', 'UsedForDataExport', 'AttachedToVirtualMachine', 'NotInUse'),
  Migrating: condition(
    'Migrating',
    'WaitForTargetReady',
    'InProgress',
    'WaitForTargetVolumeRelease',
    'WaitForSourceVolumeRelease',
    'ResizingInProgress',
    'SnapshottingInProgress',
    'StorageClassNotFound',
  ),
  Terminating: terminating,
} as const;

export const VICondition = {
  DatasourceReady: condition('DatasourceReady', ...IMAGE_DATASOURCE),
  Ready: condition('Ready', ...PROVISIONING, 'StorageClassNotReady', 'QuotaExceeded', 'ImagePullFailed', 'DatasourceNotReady', 'ImageLost', 'PVCLost'),
  StorageClassReady: condition('StorageClassReady', 'StorageClassReady', 'StorageClassNotFound', 'DVCRTypeUsed'),
  InUse: inUseByVM,
  Terminating: terminating,
} as const;

export const CVICondition = {
  DatasourceReady: condition('DatasourceReady', ...IMAGE_DATASOURCE),
  Ready: condition('Ready', ...PROVISIONING, 'ImagePullFailed', 'DatasourceNotReady', 'ImageLost'),
  InUse: inUseByVM,
  Terminating: terminating,
} as const;
