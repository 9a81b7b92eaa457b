/** Full objects for the round-trip test: the snapshot kinds. */
import { condition } from './full-common.js';

const API = 'virtualization.deckhouse.io/v1alpha2';

export const FULL_SNAPSHOTS = [
  {
    apiVersion: API,
    kind: 'VirtualDiskSnapshot',
    metadata: { name: 'root-snap' },
    spec: { virtualDiskName: 'root', requiredConsistency: false },
    status: {
      phase: 'Ready',
      volumeSnapshotName: 'vds-root-snap',
      consistent: true,
      conditions: [condition('VirtualDiskReady'), condition('VirtualDiskSnapshotReady')],
      observedGeneration: 1,
    },
  },
  {
    apiVersion: API,
    kind: 'VirtualMachineSnapshot',
    metadata: { name: 'web-snap' },
    spec: { virtualMachineName: 'web', keepIPAddress: 'Never', requiredConsistency: true },
    status: {
      phase: 'Ready',
      consistent: true,
      virtualDiskSnapshotNames: ['web-snap-root'],
      virtualMachineSnapshotSecretName: 'web-snap',
      resources: [{ apiVersion: API, kind: 'VirtualMachine', name: 'web' }],
      conditions: [condition('VirtualMachineReady'), condition('VirtualMachineSnapshotReady')],
      observedGeneration: 1,
    },
  },
  {
    apiVersion: API,
    kind: 'VirtualMachineSnapshotOperation',
    metadata: { name: 'from-snap' },
    spec: {
      type: 'CreateVirtualMachine',
      virtualMachineSnapshotName: 'web-snap',
      createVirtualMachine: {
        mode: 'BestEffort',
        customization: { namePrefix: 'new-', nameSuffix: '-b' },
        nameReplacement: [{ from: { kind: 'VirtualMachine', name: 'web' }, to: 'web2' }],
      },
    },
    status: {
      phase: 'Completed',
      resources: [{ apiVersion: API, kind: 'VirtualMachine', name: 'new-web2-b', status: 'Completed', message: 'created' }],
      conditions: [condition('Completed', 'OperationCompleted')],
      observedGeneration: 1,
    },
  },
];
