/** Table cases: VirtualDiskSnapshot, VirtualMachineSnapshot, VirtualMachineSnapshotOperation. */
import { invalid, type Manifest, type ManifestCase } from './table.js';

const API = 'virtualization.deckhouse.io/v1alpha2';
const object = (kind: string, spec?: Record<string, unknown>): Manifest => ({
  apiVersion: API,
  kind,
  metadata: { name: kind.toLowerCase() },
  ...(spec !== undefined ? { spec } : {}),
});
const vds = (spec?: Record<string, unknown>) => object('VirtualDiskSnapshot', spec);
const vms = (spec?: Record<string, unknown>) => object('VirtualMachineSnapshot', spec);
const vmsop = (spec: Record<string, unknown>) => object('VirtualMachineSnapshotOperation', { virtualMachineSnapshotName: 'snap', ...spec });
const create = { mode: 'Strict', customization: { namePrefix: 'new-' } };

export const SNAPSHOT_CASES: ManifestCase[] = [
  {
    name: 'a disk snapshot requires consistency by default',
    manifest: vds({ virtualDiskName: 'root' }),
    expect: { valid: true, defaults: { 'spec.requiredConsistency': true } },
  },
  { name: 'a disk snapshot without a disk name is rejected', manifest: vds({}), expect: invalid('spec.virtualDiskName') },
  { name: 'a disk snapshot of an empty disk name is rejected', manifest: vds({ virtualDiskName: '' }), expect: invalid('spec.virtualDiskName') },
  { name: 'a disk snapshot without spec is rejected', manifest: vds(), expect: invalid('spec') },
  {
    name: 'a disk snapshot with requiredConsistency "yes" is rejected',
    manifest: vds({ virtualDiskName: 'root', requiredConsistency: 'yes' }),
    expect: invalid('spec.requiredConsistency'),
  },
  {
    name: 'a disk snapshot naming a VM instead of a disk is rejected',
    manifest: vds({ virtualMachineName: 'web' }),
    expect: invalid('spec.virtualMachineName'),
  },
  {
    name: 'a VM snapshot keeps the IP address and requires consistency by default',
    manifest: vms({ virtualMachineName: 'web' }),
    expect: { valid: true, defaults: { 'spec.keepIPAddress': 'Always', 'spec.requiredConsistency': true } },
  },
  {
    name: 'a VM snapshot with keepIPAddress Sometimes is rejected',
    manifest: vms({ virtualMachineName: 'web', keepIPAddress: 'Sometimes' }),
    expect: invalid('spec.keepIPAddress'),
  },
  { name: 'a VM snapshot of an empty VM name is rejected', manifest: vms({ virtualMachineName: '' }), expect: invalid('spec.virtualMachineName') },
  { name: 'a VM snapshot of a VM name that is a number is rejected', manifest: vms({ virtualMachineName: 7 }), expect: invalid('spec.virtualMachineName') },
  {
    name: 'a VM from a snapshot with a name prefix is accepted',
    manifest: vmsop({ type: 'CreateVirtualMachine', createVirtualMachine: create }),
    expect: { valid: true },
  },
  {
    name: 'a VM from a snapshot without createVirtualMachine settings is rejected',
    manifest: vmsop({ type: 'CreateVirtualMachine' }),
    expect: invalid('spec.createVirtualMachine'),
  },
  {
    name: 'a snapshot operation of an unknown type is rejected',
    manifest: vmsop({ type: 'Restore', createVirtualMachine: create }),
    expect: invalid('spec.type'),
  },
  {
    name: 'a snapshot operation on an empty snapshot name is rejected',
    manifest: vmsop({ type: 'CreateVirtualMachine', virtualMachineSnapshotName: '', createVirtualMachine: create }),
    expect: invalid('spec.virtualMachineSnapshotName'),
  },
  {
    name: 'a VM from a snapshot that renames nothing is rejected',
    manifest: vmsop({ type: 'CreateVirtualMachine', createVirtualMachine: { mode: 'DryRun' } }),
    expect: invalid('spec.createVirtualMachine'),
  },
  {
    name: 'a VM from a snapshot with a name suffix of 60 characters is rejected',
    manifest: vmsop({ type: 'CreateVirtualMachine', createVirtualMachine: { mode: 'Strict', customization: { nameSuffix: 's'.repeat(60) } } }),
    expect: invalid('spec.createVirtualMachine.customization.nameSuffix'),
  },
  {
    name: 'a VM from a snapshot with an unknown mode is rejected',
    manifest: vmsop({ type: 'CreateVirtualMachine', createVirtualMachine: { ...create, mode: 'Careful' } }),
    expect: invalid('spec.createVirtualMachine.mode'),
  },
];
