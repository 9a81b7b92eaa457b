/** Full objects (every field set) for the round-trip test: VirtualMachine, class and pool. */
import { POOL_LABELS } from '../resources/vmpool.js';
import { T, condition, dataSources, labelSelector, toleration } from './full-common.js';

const API = 'virtualization.deckhouse.io/v1alpha2';

const term = {
  labelSelector,
  namespaces: ['prod'],
  topologyKey: 'kubernetes.io/hostname',
  namespaceSelector: labelSelector,
  matchLabelKeys: ['app'],
  mismatchLabelKeys: ['tenant'],
};
/** The pool template (generated from the Go types in the original) takes every pod spread field. */
const fullSpread = {
  maxSkew: 1,
  topologyKey: 'topology.kubernetes.io/zone',
  whenUnsatisfiable: 'DoNotSchedule',
  labelSelector,
  minDomains: 2,
  nodeAffinityPolicy: 'Honor',
  nodeTaintsPolicy: 'Ignore',
  matchLabelKeys: ['app'],
};
const vmAffinity = {
  requiredDuringSchedulingIgnoredDuringExecution: [term],
  preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, virtualMachineAndPodAffinityTerm: term }],
};
const nodeTerm = {
  matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }],
  matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['node-9'] }],
};

export const VM_SPEC_FULL = {
  virtualMachineClassName: 'generic',
  runPolicy: 'Manual',
  cpu: { cores: 4, coreFraction: '50%' },
  memory: { size: '8Gi' },
  blockDeviceRefs: [
    { kind: 'VirtualDisk', name: 'root', bootOrder: 1 },
    { kind: 'ClusterVirtualImage', name: 'ubuntu', bootOrder: 2 },
  ],
  provisioning: { type: 'UserData', userData: '#cloud-config\npackages: [nginx]\n' },
  virtualMachineIPAddressName: 'web-ip',
  networks: [
    { id: 1, type: 'Main' },
    { id: 2, type: 'Network', name: 'lan', virtualMachineMACAddressName: 'web-mac', ipAddressName: 'web-lan-ip' },
  ],
  usbDevices: [{ name: 'token' }],
  gpus: [{ gpuClassName: 'a100.example.com' }],
  nodeSelector: { 'node-role.kubernetes.io/vm': '' },
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [nodeTerm] },
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: nodeTerm }],
    },
    virtualMachineAndPodAffinity: vmAffinity,
    virtualMachineAndPodAntiAffinity: vmAffinity,
  },
  tolerations: [toleration],
  topologySpreadConstraints: [
    {
      maxSkew: 1,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector,
    },
  ],
  priorityClassName: 'high',
  disruptions: { restartApprovalMode: 'Automatic' },
  terminationGracePeriodSeconds: 120,
  enableParavirtualization: true,
  osType: 'Windows',
  bootloader: 'EFIWithSecureBoot',
  liveMigrationPolicy: 'AlwaysSafe',
};

const nodePod = { node: 'node-1', pod: 'virt-launcher-web-abcde' };

export const VM_STATUS_FULL = {
  phase: 'Running',
  nodeName: 'node-1',
  virtualMachineIPAddressName: 'web-ip',
  ipAddress: '10.66.10.5',
  blockDeviceRefs: [
    {
      kind: 'VirtualDisk',
      name: 'root',
      target: 'sda',
      size: '10Gi',
      attached: true,
      hotplugged: false,
      virtualMachineBlockDeviceAttachmentName: 'extra',
      bootOrder: 1,
    },
  ],
  migrationState: { startTimestamp: T, endTimestamp: T, source: nodePod, target: nodePod, result: 'Succeeded' },
  stats: {
    phasesTransitions: [{ phase: 'Running', timestamp: T }],
    launchTimeDuration: { waitingForDependencies: '1s', virtualMachineStarting: '20s', guestOSAgentStarting: '5s' },
    lastStartTime: T,
  },
  guestOSInfo: { name: 'Ubuntu', kernelRelease: '6.8.0', id: 'ubuntu' },
  conditions: [condition('Running'), condition('AgentReady')],
  restartAwaitingChanges: [{ operation: 'replace', path: 'cpu.cores', currentValue: 2, desiredValue: 4 }],
  recommendedResources: { cpu: { coreFraction: '20%' } },
  virtualMachinePods: [{ name: 'virt-launcher-web-abcde', active: true }],
  versions: { libvirt: '10.0.0', qemu: '9.0.0' },
  resources: {
    cpu: {
      cores: 4,
      coreFraction: '50%',
      requestedCores: '2',
      runtimeOverhead: '100m',
      topology: { coresPerSocket: 4, sockets: 1 },
    },
    memory: { size: '8Gi', runtimeOverhead: '256Mi' },
  },
  usbDevices: [{ name: 'token', attached: true, ready: true, address: { bus: 0, port: 1 }, hotplugged: true }],
  networks: [
    {
      id: 2,
      type: 'Network',
      name: 'lan',
      macAddress: 'aa:bb:cc:dd:ee:ff',
      virtualMachineMACAddressName: 'web-mac',
      ipAddress: '192.168.1.5',
    },
  ],
  observedGeneration: 1,
};

const vmObject = (spec: Record<string, unknown>) => ({
  apiVersion: API,
  kind: 'VirtualMachine',
  metadata: { name: 'web', labels: { app: 'web' }, annotations: { note: 'full' } },
  spec: { ...VM_SPEC_FULL, ...spec },
  status: VM_STATUS_FULL,
});

/** One provisioning of each type (the types exclude each other). */
const PROVISIONINGS = [
  VM_SPEC_FULL.provisioning,
  { type: 'UserDataRef', userDataRef: { kind: 'Secret', name: 'cloud-init' } },
  { type: 'SysprepRef', sysprepRef: { kind: 'Secret', name: 'unattend' } },
];

export const FULL_VMS = PROVISIONINGS.map((provisioning) => vmObject({ provisioning }));

const classObject = (cpu: Record<string, unknown>) => ({
  apiVersion: API,
  kind: 'VirtualMachineClass',
  metadata: { name: 'gold' },
  spec: {
    cpu,
    nodeSelector: labelSelector,
    tolerations: [toleration],
    sizingPolicies: [
      {
        cores: { min: 1, max: 4, step: 1 },
        memory: { min: '1Gi', max: '16Gi', step: '1Gi', perCore: { min: '1Gi', max: '4Gi' } },
        coreFractions: [5, 10, 20, 50, 100],
        dedicatedCores: [false, true],
        defaultCoreFraction: 20,
      },
    ],
  },
  status: {
    phase: 'Ready',
    availableNodes: ['node-1'],
    cpuFeatures: { enabled: ['sse4_2'], notEnabledCommon: ['avx512f'] },
    maxAllocatableResources: { cpu: '64', memory: '256Gi' },
    conditions: [condition('Ready', 'SuitableNodesFound')],
    observedGeneration: 1,
  },
});

export const FULL_CLASSES = [
  classObject({ type: 'Model', model: 'Nehalem' }),
  classObject({ type: 'Features', features: ['vmx', 'sse4_2'] }),
  classObject({ type: 'Discovery', discovery: { nodeSelector: labelSelector } }),
];

const poolDisks = dataSources({ kind: 'ClusterVirtualImage', name: 'ubuntu' }, undefined, true).map((dataSource, i) => ({
  name: `disk${i}`,
  reclaim: { onScaleDown: 'Retain', keep: 2, ttl: '24h' },
  spec: { dataSource, persistentVolumeClaim: { size: '20Gi', storageClassName: 'fast' } },
}));

/** The full VM spec as a pool template takes it: no GPUs (the original's pool has none). */
const poolVmSpec: Record<string, unknown> = { ...VM_SPEC_FULL };
delete poolVmSpec['gpus'];

const poolObject = (provisioning: Record<string, unknown>) => ({
  apiVersion: API,
  kind: 'VirtualMachinePool',
  metadata: { name: 'web' },
  spec: {
    replicas: 3,
    scaleDownPolicy: 'OldestFirst',
    virtualDiskTemplates: poolDisks,
    virtualMachineTemplate: {
      metadata: { labels: { app: 'web' }, annotations: { note: 'pool' } },
      spec: {
        ...poolVmSpec,
        provisioning,
        liveMigrationPolicy: 'Never',
        memory: { size: 8589934592 },
        topologySpreadConstraints: [fullSpread],
        blockDeviceRefs: poolDisks.map((d, i) => ({ kind: 'VirtualDisk', name: d.name, bootOrder: i + 1 })),
      },
    },
  },
  status: {
    replicas: 3,
    readyReplicas: 2,
    updatedReplicas: 3,
    restartPendingReplicas: 1,
    desiredTemplateHash: 'abc123',
    selector: `${POOL_LABELS.poolUID}=0000`,
    conditions: [condition('Available', 'AllReplicasReady'), condition('Synced', 'PoolSynced')],
    observedGeneration: 1,
  },
});

export const FULL_POOLS = PROVISIONINGS.map(poolObject);
