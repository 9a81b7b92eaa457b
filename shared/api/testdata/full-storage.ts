/** Full objects for the round-trip test: disks, images, attachments. */
import { T, condition, dataSources } from './full-common.js';

const API = 'virtualization.deckhouse.io/v1alpha2';
const downloadSpeed = { avg: '10 MiB/s', avgBytes: '10485760', current: '12 MiB/s', currentBytes: '12582912' };
const imageUploadURLs = { external: 'https://upload.example.com/x', inCluster: 'http://uploader.svc/x' };

const VD_STATUS = {
  phase: 'Ready',
  capacity: '20Gi',
  progress: '100%',
  downloadSpeed,
  imageUploadURLs,
  uploadCommand: 'curl -T disk.img https://upload.example.com/x',
  target: { persistentVolumeClaimName: 'vd-root-1234' },
  storageClassName: 'fast',
  sourceUID: '11111111-2222-3333-4444-555555555555',
  attachedToVirtualMachines: [{ name: 'web', mounted: true }],
  migrationState: {
    sourcePVC: 'vd-root-1234',
    targetPVC: 'vd-root-5678',
    result: 'Succeeded',
    message: 'done',
    startTimestamp: T,
    endTimestamp: T,
  },
  stats: {
    creationDuration: { waitingForDependencies: '1s', dvcrProvisioning: '10s', totalProvisioning: '30s', waitingForFirstConsumer: '2s' },
  },
  conditions: [condition('Ready')],
  observedGeneration: 1,
};

export const FULL_DISKS = dataSources({ kind: 'VirtualImage', name: 'ubuntu' }).map((dataSource) => ({
  apiVersion: API,
  kind: 'VirtualDisk',
  metadata: { name: 'root' },
  spec: { dataSource, persistentVolumeClaim: { size: '20Gi', storageClassName: 'fast' } },
  status: VD_STATUS,
}));

const imageStatus = {
  cdrom: false,
  format: 'qcow2',
  progress: '100%',
  downloadSpeed,
  size: { stored: '1Gi', storedBytes: '1073741824', unpacked: '10Gi', unpackedBytes: '10737418240' },
  imageUploadURLs,
  uploadCommand: 'curl -T image.qcow2 https://upload.example.com/x',
  sourceUID: '11111111-2222-3333-4444-555555555555',
  conditions: [condition('Ready')],
  observedGeneration: 1,
};

export const FULL_IMAGES = dataSources({ kind: 'VirtualDisk', name: 'root' }).map((dataSource) => ({
  apiVersion: API,
  kind: 'VirtualImage',
  metadata: { name: 'ubuntu' },
  spec: { storage: 'PersistentVolumeClaim', persistentVolumeClaim: { storageClassName: 'fast' }, dataSource },
  status: {
    ...imageStatus,
    phase: 'Ready',
    target: { registryURL: 'dvcr.d8-virtualization.svc/vi/ns/ubuntu:uid', persistentVolumeClaimName: 'vi-ubuntu' },
    storageClassName: 'fast',
  },
}));

export const FULL_CLUSTER_IMAGES = dataSources(
  { kind: 'VirtualImage', name: 'ubuntu', namespace: 'images' },
  { name: 'pull', namespace: 'images' },
).map(
  (dataSource) => ({
    apiVersion: API,
    kind: 'ClusterVirtualImage',
    metadata: { name: 'ubuntu' },
    spec: { dataSource },
    status: {
      ...imageStatus,
      phase: 'Ready',
      target: { registryURL: 'dvcr.d8-virtualization.svc/cvi/ubuntu:uid' },
      usedInNamespaces: ['prod'],
    },
  }),
);

export const FULL_ATTACHMENTS = [
  {
    apiVersion: API,
    kind: 'VirtualMachineBlockDeviceAttachment',
    metadata: { name: 'extra' },
    spec: { blockDeviceRef: { kind: 'VirtualDisk', name: 'data' }, virtualMachineName: 'web' },
    status: {
      phase: 'Attached',
      virtualMachineName: 'web',
      conditions: [condition('DiskAttachmentCapacityAvailableType', 'CapacityAvailable')],
      observedGeneration: 1,
    },
  },
];

const profileFields = { cloneStrategy: 'copy', dataImportCronSourceFormat: 'pvc', snapshotClass: 'fast-snapshots' };

export const FULL_STORAGE_PROFILES = [
  {
    apiVersion: 'storage.virtualization.deckhouse.io/v1alpha1',
    kind: 'StorageProfile',
    metadata: { name: 'fast' },
    spec: { ...profileFields, claimPropertySets: [{ accessModes: ['ReadWriteMany'], volumeMode: 'Block' }] },
    status: {
      ...profileFields,
      claimPropertySets: [{ accessModes: ['ReadWriteMany'], volumeMode: 'Block' }],
      provisioner: 'replicated.csi.storage.deckhouse.io',
      storageClass: 'fast',
    },
  },
];
