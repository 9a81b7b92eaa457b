/** VirtualMachine network and IP address rules: one conforming and one violating case each. */
import { NO_SETTINGS } from '../../testing/fake-lookups.js';
import { typed, vm, type VmIn } from '../../testing/objects.js';
import { ruleTable } from '../../testing/rule-table.js';
import { vmWorld, withSdn } from './fixtures.js';
import { virtualMachineValidator } from './index.js';

type Networks = NonNullable<VmIn['spec']['networks']>;
const nets = (networks: Networks, change?: (o: VmIn) => void): VmIn =>
  vm((o) => {
    o.spec.networks = networks;
    change?.(o);
  });
const stopped = (o: VmIn): void => void (o.status = { phase: 'Stopped' });
const running = (o: VmIn): void => void (o.status = { phase: 'Running' });

ruleTable(virtualMachineValidator, vmWorld, [
  {
    rule: 'the Main network comes first',
    good: { object: nets([{ type: 'Main' }, { type: 'Network', name: 'net-a' }]), world: withSdn },
    bad: { object: nets([{ type: 'Network', name: 'net-a' }, { type: 'Main' }]), world: withSdn },
    expect: { deny: 'spec.networks[1]', message: /Main network must be the first/ },
  },
  {
    rule: 'the Main network has no name',
    good: { object: nets([{ type: 'Main' }]) },
    bad: { object: nets([{ type: 'Main', name: 'main' }]) },
    expect: { deny: 'spec.networks[0].name', message: /must be empty for the Main network/ },
  },
  {
    rule: 'other networks are named',
    good: { object: nets([{ type: 'Main' }, { type: 'ClusterNetwork', name: 'cnet' }]), world: withSdn },
    bad: { object: nets([{ type: 'Main' }, { type: 'ClusterNetwork' }]), world: withSdn },
    expect: { deny: 'spec.networks[1].name', message: /is required for type ClusterNetwork/ },
  },
  {
    rule: 'a network is listed once',
    good: { object: nets([{ type: 'Main' }, { type: 'Network', name: 'net-a' }, { type: 'ClusterNetwork', name: 'cnet' }]), world: withSdn },
    bad: { object: nets([{ type: 'Main' }, { type: 'Network', name: 'net-a' }, { type: 'Network', name: 'net-a' }]), world: withSdn },
    expect: { deny: 'spec.networks[2]', message: /Network\/net-a is already listed/ },
  },
  {
    rule: 'the Main network has id 1',
    good: { object: nets([{ type: 'Main', id: 1 }]) },
    bad: { object: nets([{ type: 'Main', id: 2 }]) },
    expect: { deny: 'spec.networks[0].id', message: /must be 1 for the Main network/ },
  },
  {
    rule: 'network ids are unique and in range',
    good: {
      object: nets([
        { type: 'Main', id: 1 },
        { type: 'Network', name: 'net-a', id: 16383 },
      ]),
      world: withSdn,
    },
    bad: {
      object: nets([
        { type: 'Main', id: 1 },
        { type: 'Network', name: 'net-a', id: 16384 },
      ]),
      world: withSdn,
    },
    expect: { deny: 'spec.networks[1].id', message: /from 1 to 16383/ },
  },
  {
    rule: 'network ids change only while the VM is stopped',
    good: {
      object: nets([
        { type: 'Main', id: 1 },
        { type: 'Network', name: 'net-a', id: 3 },
      ]),
      old: nets(
        [
          { type: 'Main', id: 1 },
          { type: 'Network', name: 'net-a', id: 2 },
        ],
        stopped,
      ),
      world: withSdn,
    },
    bad: {
      object: nets([
        { type: 'Main', id: 1 },
        { type: 'Network', name: 'net-a', id: 3 },
      ]),
      old: nets(
        [
          { type: 'Main', id: 1 },
          { type: 'Network', name: 'net-a', id: 2 },
        ],
        running,
      ),
      world: withSdn,
    },
    expect: { deny: 'spec.networks[1].id', message: /cannot change from 2 to 3 unless the VM is Stopped/ },
  },
  {
    rule: 'named networks exist',
    good: { object: nets([{ type: 'Main' }, { type: 'Network', name: 'net-a' }]), world: withSdn },
    bad: { object: nets([{ type: 'Main' }, { type: 'Network', name: 'net-b' }]), world: withSdn },
    expect: { deny: 'spec.networks[1].name', message: /Network net-b does not exist/ },
  },
  {
    rule: 'additional networks need the SDN module',
    good: { object: nets([{ type: 'Main' }, { type: 'Network', name: 'net-a' }]), world: withSdn },
    bad: { object: nets([{ type: 'Main' }, { type: 'Network', name: 'net-a' }]) },
    expect: { deny: 'spec.networks', message: /need the SDN module/ },
  },
  {
    rule: 'without virtualMachineCIDRs a VM lists its networks',
    good: { object: nets([{ type: 'Network', name: 'net-a' }]), world: (w) => void (withSdn(w), (w.settings = NO_SETTINGS)) },
    bad: { object: vm(), world: (w) => void (w.settings = NO_SETTINGS) },
    expect: { deny: 'spec.networks', message: /is required: the module has no virtualMachineCIDRs/ },
  },
  {
    rule: 'without virtualMachineCIDRs the Main network is unavailable',
    good: { object: nets([{ type: 'Network', name: 'net-a' }]), world: (w) => void (withSdn(w), (w.settings = NO_SETTINGS)) },
    bad: { object: nets([{ type: 'Main' }]), world: (w) => void (w.settings = NO_SETTINGS) },
    expect: { deny: 'spec.networks[0]', message: /Main network is unavailable/ },
  },
  {
    rule: 'an IP address name needs the Main network',
    good: { object: vm((o) => void (o.spec.virtualMachineIPAddressName = 'ip-a')) },
    bad: { object: nets([{ type: 'Network', name: 'net-a' }], (o) => void (o.spec.virtualMachineIPAddressName = 'ip-a')), world: withSdn },
    expect: { deny: 'spec.virtualMachineIPAddressName', message: /the VM has no Main network/ },
  },
  {
    rule: 'an IP address name needs virtualMachineCIDRs',
    good: { object: vm((o) => void (o.spec.virtualMachineIPAddressName = 'ip-a')) },
    bad: {
      object: nets([{ type: 'Network', name: 'net-a' }], (o) => void (o.spec.virtualMachineIPAddressName = 'ip-a')),
      world: (w) => void (withSdn(w), (w.settings = NO_SETTINGS)),
    },
    expect: { deny: 'spec.virtualMachineIPAddressName', message: /the module has no virtualMachineCIDRs/ },
  },
  {
    rule: 'a new VM names the existing address named like it',
    good: { object: vm((o) => void (o.spec.virtualMachineIPAddressName = 'vm1')), world: (w) => void w.vmips.push(typed.vmip()) },
    bad: { object: vm(), world: (w) => void w.vmips.push(typed.vmip()) },
    expect: { deny: 'spec.virtualMachineIPAddressName', message: /set spec.virtualMachineIPAddressName to vm1/ },
  },
]);
