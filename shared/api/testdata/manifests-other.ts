/** Table cases: operations, addresses and leases, USB devices, the KubeVirt backend subset. */
import { invalid, type Manifest, type ManifestCase } from './table.js';

const API = 'virtualization.deckhouse.io/v1alpha2';
const object = (kind: string, spec?: Record<string, unknown>, apiVersion = API): Manifest => ({
  apiVersion,
  kind,
  metadata: { name: kind.toLowerCase() },
  ...(spec !== undefined ? { spec } : {}),
});
const vmop = (spec: Record<string, unknown>) => object('VirtualMachineOperation', { virtualMachineName: 'vm', ...spec });

export const VMOP_CASES: ManifestCase[] = [
  { name: 'a restart operation is accepted', manifest: vmop({ type: 'Restart', force: true }), expect: { valid: true } },
  {
    name: 'a migration to selected nodes is accepted',
    manifest: vmop({ type: 'Migrate', migrate: { nodeSelector: { zone: 'b' } } }),
    expect: { valid: true },
  },
  {
    name: 'a clone with a name prefix is accepted',
    manifest: vmop({ type: 'Clone', clone: { mode: 'Strict', customization: { namePrefix: 'copy-' } } }),
    expect: { valid: true },
  },
  {
    name: 'a restore from a snapshot is accepted',
    manifest: vmop({ type: 'Restore', restore: { mode: 'DryRun', virtualMachineSnapshotName: 'snap' } }),
    expect: { valid: true },
  },
  { name: 'a forced start is rejected', manifest: vmop({ type: 'Start', force: true }), expect: invalid('spec.force', 'The `Start` operation cannot be performed forcibly.') },
  { name: 'a restore without restore settings is rejected', manifest: vmop({ type: 'Restore' }), expect: invalid('spec.restore', 'Restore requires restore field.') },
  { name: 'a clone without clone settings is rejected', manifest: vmop({ type: 'Clone' }), expect: invalid('spec.clone', 'Clone requires clone field.') },
  {
    name: 'migrate settings on a restart are rejected',
    manifest: vmop({ type: 'Restart', migrate: {} }),
    expect: invalid('spec.migrate'),
  },
  {
    name: 'a clone that renames nothing is rejected',
    manifest: vmop({ type: 'Clone', clone: { mode: 'BestEffort' } }),
    expect: invalid('spec.clone', 'At least one of customization.namePrefix, customization.nameSuffix, or nameReplacement must be set'),
  },
  {
    name: 'a clone name prefix of 60 characters is rejected',
    manifest: vmop({ type: 'Clone', clone: { mode: 'Strict', customization: { namePrefix: 'p'.repeat(60) } } }),
    expect: invalid('spec.clone.customization.namePrefix', 'namePrefix length must be between 1 and 59 characters if set'),
  },
  {
    name: 'an operation on a VM with an empty name is rejected',
    manifest: vmop({ type: 'Stop', virtualMachineName: '' }),
    expect: invalid('spec.virtualMachineName'),
  },
  {
    name: 'a restore from a snapshot with an empty name is rejected',
    manifest: vmop({ type: 'Restore', restore: { mode: 'Strict', virtualMachineSnapshotName: '' } }),
    expect: invalid('spec.restore.virtualMachineSnapshotName'),
  },
  {
    name: 'a restore with an unknown mode is rejected',
    manifest: vmop({ type: 'Restore', restore: { mode: 'Eventually', virtualMachineSnapshotName: 's' } }),
    expect: invalid('spec.restore.mode'),
  },
  {
    name: 'a clone renaming a resource with an empty name is rejected',
    manifest: vmop({ type: 'Clone', clone: { mode: 'Strict', nameReplacement: [{ from: { name: '' }, to: 'x' }] } }),
    expect: invalid('spec.clone.nameReplacement[0].from.name'),
  },
  { name: 'an unknown operation type is rejected', manifest: vmop({ type: 'Reboot' }), expect: invalid('spec.type') },
  {
    name: 'an operation without a VM name is rejected',
    manifest: object('VirtualMachineOperation', { type: 'Stop' }),
    expect: invalid('spec.virtualMachineName'),
  },
];

const ref = { name: 'vm-ip', namespace: 'default' };

export const ADDRESS_CASES: ManifestCase[] = [
  { name: 'an automatic IP address is accepted', manifest: object('VirtualMachineIPAddress', { type: 'Auto' }), expect: { valid: true } },
  {
    name: 'a static IP address is accepted',
    manifest: object('VirtualMachineIPAddress', { type: 'Static', staticIP: '10.66.10.5' }),
    expect: { valid: true },
  },
  {
    name: 'an IP address of an unknown type is rejected',
    manifest: object('VirtualMachineIPAddress', { type: 'Dhcp' }),
    expect: invalid('spec.type'),
  },
  { name: 'an IP address without type is rejected', manifest: object('VirtualMachineIPAddress', {}), expect: invalid('spec.type') },
  {
    name: 'an IP lease naming its address is accepted',
    manifest: object('VirtualMachineIPAddressLease', { virtualMachineIPAddressRef: ref }),
    expect: { valid: true },
  },
  {
    name: 'an IP lease reference without namespace is rejected',
    manifest: object('VirtualMachineIPAddressLease', { virtualMachineIPAddressRef: { name: 'vm-ip' } }),
    expect: invalid('spec.virtualMachineIPAddressRef.namespace'),
  },
  { name: 'a MAC address to be generated is accepted', manifest: object('VirtualMachineMACAddress', {}), expect: { valid: true } },
  {
    name: 'a bare MAC address without spec is accepted, as by the original',
    manifest: object('VirtualMachineMACAddress'),
    expect: { valid: true, defaults: { spec: {} } },
  },
  {
    name: 'a bare IP address without spec is accepted as an automatic address',
    manifest: object('VirtualMachineIPAddress'),
    expect: { valid: true, defaults: { 'spec.type': 'Auto' } },
  },
  {
    name: 'a static IP given as a number is rejected',
    manifest: object('VirtualMachineIPAddress', { type: 'Static', staticIP: 167772165 }),
    expect: invalid('spec.staticIP'),
  },
  { name: 'a bare IP lease without spec is accepted', manifest: object('VirtualMachineIPAddressLease'), expect: { valid: true } },
  { name: 'a bare MAC lease without spec is accepted', manifest: object('VirtualMachineMACAddressLease'), expect: { valid: true } },
  {
    name: 'a MAC address of a number is rejected',
    manifest: object('VirtualMachineMACAddress', { address: 5 }),
    expect: invalid('spec.address'),
  },
  {
    name: 'a requested MAC address is accepted',
    manifest: object('VirtualMachineMACAddress', { address: 'aa-bb-cc-dd-ee-ff' }),
    expect: { valid: true },
  },
  {
    name: 'a malformed MAC address is rejected',
    manifest: object('VirtualMachineMACAddress', { address: 'aa:bb:cc:dd:ee' }),
    expect: invalid('spec.address'),
  },
  {
    name: 'a MAC lease naming its address is accepted',
    manifest: object('VirtualMachineMACAddressLease', { virtualMachineMACAddressRef: ref }),
    expect: { valid: true },
  },
  {
    name: 'a MAC lease reference without name is rejected',
    manifest: object('VirtualMachineMACAddressLease', { virtualMachineMACAddressRef: { namespace: 'default' } }),
    expect: invalid('spec.virtualMachineMACAddressRef.name'),
  },
];

export const USB_CASES: ManifestCase[] = [
  {
    name: 'a node USB device is unassigned by default',
    manifest: object('NodeUSBDevice', {}),
    expect: { valid: true, defaults: { 'spec.assignedNamespace': '' } },
  },
  { name: 'a node USB device without spec is rejected', manifest: object('NodeUSBDevice'), expect: invalid('spec') },
  {
    name: 'a node USB device assigned to a number is rejected',
    manifest: object('NodeUSBDevice', { assignedNamespace: 5 }),
    expect: invalid('spec.assignedNamespace'),
  },
  { name: 'a USB device without spec is accepted', manifest: object('USBDevice'), expect: { valid: true } },
  { name: 'a USB device with a spec is rejected', manifest: object('USBDevice', {}), expect: invalid('spec') },
];

const INTERNAL = 'internal.virtualization.deckhouse.io/v1';
const domain = { cpu: { cores: 1 }, memory: { guest: '1Gi' }, devices: {} };

export const INTERNAL_CASES: ManifestCase[] = [
  {
    name: 'a backend VM with fields we do not type is accepted',
    manifest: object(
      'InternalVirtualizationVirtualMachine',
      { runStrategy: 'Manual', template: { spec: { domain, hostname: 'kept' } }, instancetype: { name: 'x' } },
      INTERNAL,
    ),
    expect: { valid: true, defaults: { 'spec.instancetype.name': 'x' } },
  },
  {
    name: 'a backend VM instance is accepted',
    manifest: object('InternalVirtualizationVirtualMachineInstance', { domain }, INTERNAL),
    expect: { valid: true },
  },
  {
    name: 'a backend migration is accepted',
    manifest: object('InternalVirtualizationVirtualMachineInstanceMigration', { vmiName: 'vm' }, INTERNAL),
    expect: { valid: true },
  },
  {
    name: 'a KubeVirt configuration is accepted',
    manifest: object(
      'InternalVirtualizationKubeVirt',
      { configuration: { developerConfiguration: { featureGates: ['HotplugVolumes'] } } },
      INTERNAL,
    ),
    expect: { valid: true },
  },
  {
    name: 'a CDI object is accepted',
    manifest: object('InternalVirtualizationCDI', {}, 'cdi.internal.virtualization.deckhouse.io/v1beta1'),
    expect: { valid: true },
  },
];
