/** Full objects for the round-trip test: operations, addresses, USB, the KubeVirt subset. */
import { T, condition, labelSelector } from './full-common.js';

const API = 'virtualization.deckhouse.io/v1alpha2';
const INTERNAL = 'internal.virtualization.deckhouse.io/v1';

const vmopStatus = {
  phase: 'Completed',
  progress: '100%',
  resources: [{ apiVersion: API, kind: 'VirtualDisk', name: 'copy-root', status: 'Completed', message: 'cloned' }],
  conditions: [condition('Completed', 'OperationCompleted')],
  observedGeneration: 1,
};

const vmop = (spec: Record<string, unknown>) => ({
  apiVersion: API,
  kind: 'VirtualMachineOperation',
  metadata: { name: 'op' },
  spec: { virtualMachineName: 'web', force: false, ...spec },
  status: vmopStatus,
});

export const FULL_OPERATIONS = [
  vmop({ type: 'Migrate', force: true, migrate: { nodeSelector: { zone: 'b' } } }),
  vmop({ type: 'Restore', restore: { mode: 'BestEffort', virtualMachineSnapshotName: 'snap' } }),
  vmop({
    type: 'Clone',
    clone: {
      mode: 'Strict',
      customization: { namePrefix: 'copy-', nameSuffix: '-2' },
      nameReplacement: [{ from: { kind: 'VirtualDisk', name: 'root' }, to: 'root-copy' }],
    },
  }),
];

const addressStatus = {
  address: '10.66.10.5',
  virtualMachineName: 'web',
  phase: 'Attached',
  conditions: [condition('Bound'), condition('Attached')],
  observedGeneration: 1,
};
const ref = { name: 'web-ip', namespace: 'prod' };
const leaseStatus = (phase: string) => ({ phase, conditions: [condition('Bound')], observedGeneration: 1 });
const object = (kind: string, name: string, spec: unknown, status: unknown, apiVersion = API) => ({
  apiVersion,
  kind,
  metadata: { name },
  spec,
  status,
});

export const FULL_ADDRESSES = [
  object('VirtualMachineIPAddress', 'web-ip', { type: 'Static', staticIP: '10.66.10.5' }, addressStatus),
  object('VirtualMachineIPAddressLease', 'ip-10-66-10-5', { virtualMachineIPAddressRef: ref }, leaseStatus('Bound')),
  object('VirtualMachineMACAddress', 'web-mac', { address: 'aa:bb:cc:dd:ee:ff' }, { ...addressStatus, address: 'aa:bb:cc:dd:ee:ff' }),
  object('VirtualMachineMACAddressLease', 'mac-aa-bb-cc-dd-ee-ff', { virtualMachineMACAddressRef: ref }, leaseStatus('Bound')),
];

const usbStatus = {
  attributes: {
    bcd: '0100',
    bus: '1',
    deviceNumber: '4',
    devicePath: '/sys/bus/usb/devices/1-1',
    major: 189,
    manufacturer: 'Yubico',
    minor: 3,
    name: 'usb-1-1',
    nodeName: 'node-1',
    product: 'YubiKey',
    productID: '0407',
    serial: '123456',
    speed: 12,
    vendorID: '1050',
  },
  nodeName: 'node-1',
  conditions: [condition('Ready'), condition('Attached', 'AttachedToVirtualMachine')],
  observedGeneration: 1,
};

export const FULL_USB = [
  object('NodeUSBDevice', 'usb-1-1', { assignedNamespace: 'prod' }, usbStatus),
  { apiVersion: API, kind: 'USBDevice', metadata: { name: 'usb-1-1' }, status: usbStatus },
];

const kvCondition = { type: 'Ready', status: 'True', reason: 'Ready', message: 'ok', lastProbeTime: null, lastTransitionTime: T };
const migrationState = {
  startTimestamp: T,
  endTimestamp: T,
  completed: true,
  failed: false,
  abortStatus: '',
  mode: 'PreCopy',
  sourceNode: 'node-1',
  targetNode: 'node-2',
  sourcePod: 'virt-launcher-a',
  targetPod: 'virt-launcher-b',
  migrationUid: 'm-1',
  targetNodeAddress: '10.0.0.2',
  targetNodeDomainReadyTimestamp: T,
  targetDirectMigrationNodePorts: { '49152': 0 },
  failureReason: '',
};
const vmiSpec = {
  domain: {
    cpu: { cores: 1, sockets: 4, threads: 1, maxSockets: 8, model: 'Nehalem', features: [{ name: 'invtsc', policy: 'optional' }] },
    memory: { guest: '8Gi', maxGuest: '256Gi' },
    machine: { type: 'q35' },
    firmware: { serial: 'abc', bootloader: { bios: {}, efi: { secureBoot: true, persistent: true } } },
    devices: {
      disks: [
        { name: 'vd-root', bootOrder: 1, serial: 'abc', errorPolicy: 'report', disk: { bus: 'scsi', readonly: false } },
        { name: 'cvi-ubuntu', cdrom: { bus: 'sata', readonly: true } },
      ],
      interfaces: [{ name: 'default', model: 'virtio', macAddress: 'aa:bb:cc:dd:ee:ff', acpiIndex: 1, state: 'up', binding: { name: 'bpfbridge' } }],
      autoattachInputDevice: true,
      useVirtioTransitional: false,
    },
    features: { acpi: {} },
    resources: { requests: { memory: '8Gi' }, limits: { cpu: '4' } },
  },
  volumes: [
    { name: 'vd-root', persistentVolumeClaim: { claimName: 'vd-root-1234', readOnly: false, hotpluggable: true } },
    { name: 'cvi-ubuntu', containerDisk: { image: 'dvcr/cvi/ubuntu:uid', hotpluggable: false } },
    { name: 'cloudinit', cloudInitNoCloud: { userData: '#cloud-config\n', secretRef: { name: 'ci' } } },
    { name: 'sysprep', sysprep: { secret: { name: 'unattend' } } },
  ],
  networks: [{ name: 'default', pod: {} }],
  nodeSelector: { zone: 'a' },
  affinity: { nodeAffinity: {} },
  tolerations: [{ key: 'x', operator: 'Exists' }],
  topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector }],
  terminationGracePeriodSeconds: 60,
  priorityClassName: 'high',
};

export const FULL_INTERNAL = [
  object(
    'InternalVirtualizationVirtualMachine',
    'web',
    { runStrategy: 'Manual', updateVolumesStrategy: 'Migration', template: { metadata: { labels: { a: 'b' }, annotations: { c: 'd' } }, spec: vmiSpec } },
    {
      printableStatus: 'Running',
      ready: true,
      created: true,
      runStrategy: 'Manual',
      conditions: [kvCondition],
      stateChangeRequests: [{ action: 'Stop', uid: 'u-1', data: { force: 'true' } }],
      volumeRequests: [{ addVolumeOptions: { name: 'x', disk: { name: 'x', disk: { bus: 'scsi' } }, volumeSource: { persistentVolumeClaim: { claimName: 'vd-x', hotpluggable: true } } } }],
      observedGeneration: 2,
      desiredGeneration: 2,
    },
    INTERNAL,
  ),
  object(
    'InternalVirtualizationVirtualMachineInstance',
    'web',
    vmiSpec,
    {
      phase: 'Running',
      nodeName: 'node-1',
      evacuationNodeName: 'node-1',
      reason: '',
      interfaces: [{ name: 'default', ipAddress: '10.66.10.5', ipAddresses: ['10.66.10.5'], mac: 'aa:bb:cc:dd:ee:ff' }],
      conditions: [kvCondition],
      migrationState,
      guestOSInfo: { name: 'Ubuntu' },
      fsFreezeStatus: 'frozen',
      activePods: { 'pod-uid': 'node-1' },
      launcherContainerImageVersion: 'v1',
      qosClass: 'Burstable',
      volumeStatus: [{ name: 'vd-root', target: 'sda' }],
      migratedVolumes: [
        {
          volumeName: 'vd-root',
          sourcePVCInfo: { claimName: 'vd-root-1234', volumeMode: 'Block' },
          destinationPVCInfo: { claimName: 'vd-root-5678', volumeMode: 'Block' },
        },
      ],
      deviceStatus: { hostDeviceStatuses: [{ name: 'usb-dongle', phase: 'Ready', address: '0:1', reason: 'Attached', message: 'attached to the guest' }] },
    },
    INTERNAL,
  ),
  object(
    'InternalVirtualizationVirtualMachineInstanceMigration',
    'web-migration',
    { vmiName: 'web', addedNodeSelector: { zone: 'b' } },
    {
      phase: 'Succeeded',
      migrationState,
      conditions: [kvCondition],
      phaseTransitionTimestamps: [{ phase: 'Succeeded', phaseTransitionTimestamp: T }],
    },
    INTERNAL,
  ),
  object(
    'InternalVirtualizationKubeVirt',
    'config',
    {
      configuration: { developerConfiguration: { featureGates: ['HotplugVolumes'] }, migrations: { parallelMigrationsPerCluster: 5 } },
      customizeComponents: { patches: [] },
      infra: { replicas: 1 },
      workloads: { nodePlacement: {} },
      certificateRotateStrategy: { selfSigned: {} },
    },
    { phase: 'Deployed', conditions: [kvCondition], observedKubeVirtVersion: 'v1.3.1' },
    INTERNAL,
  ),
  object(
    'InternalVirtualizationCDI',
    'cdi',
    { infra: {} },
    { phase: 'Deployed', conditions: [kvCondition] },
    'cdi.internal.virtualization.deckhouse.io/v1beta1',
  ),
];
