/** VirtualMachine CPU and sizing rules: one conforming and one violating case each. */
import { vm } from '../../testing/objects.js';
import { ruleTable } from '../../testing/rule-table.js';
import type { World } from '../../testing/fake-lookups.js';
import { VPA, vmWorld } from './fixtures.js';
import { virtualMachineValidator } from './index.js';

const autoReady = (w: World): void => {
  w.apis.push(VPA);
  w.settings = { ...w.settings, featureGates: ['HotplugCPUAndMemoryWithInPlaceResize'] };
};
const noClasses = (w: World): void => void (w.classes = []);

ruleTable(virtualMachineValidator, vmWorld, [
  {
    rule: 'a VM has at most 248 cores',
    good: { object: vm((o) => void (o.spec.cpu = { cores: 248, coreFraction: '100%' })), world: noClasses },
    bad: { object: vm((o) => void (o.spec.cpu = { cores: 249, coreFraction: '100%' })), world: noClasses },
    expect: { deny: 'spec.cpu.cores', message: /at most 248/ },
  },
  {
    rule: 'cores are a multiple of the socket count',
    good: { object: vm((o) => void (o.spec.cpu = { cores: 36, coreFraction: '100%' })) },
    bad: { object: vm((o) => void (o.spec.cpu = { cores: 34, coreFraction: '100%' })) },
    expect: { deny: 'spec.cpu.cores', message: /multiple of 4: a VM with 34 cores has 4 sockets/ },
  },
  {
    rule: 'a sizing policy covers the core count',
    good: { object: vm((o) => void (o.spec.cpu = { cores: 4, coreFraction: '50%' })) },
    bad: { object: vm((o) => void (o.spec.cpu = { cores: 4, coreFraction: '50%' })), world: (w) => void w.classes[0]?.spec.sizingPolicies?.splice(0, 1) },
    expect: { deny: 'spec.cpu.cores', message: /no sizing policy of VirtualMachineClass generic covers 4 cores \(ranges: 5-8, 9-16, 17-1024\)/ },
  },
  {
    rule: 'the core fraction is one the policy allows',
    good: { object: vm((o) => void (o.spec.cpu.coreFraction = '20%')) },
    bad: { object: vm((o) => void (o.spec.cpu.coreFraction = '30%')) },
    expect: { deny: 'spec.cpu.coreFraction', message: /must be one of 5%, 10%, 20%, 50%, 100%/ },
  },
  {
    rule: 'memory is within the policy range',
    good: { object: vm((o) => void (o.spec.memory.size = '32Gi')) },
    bad: { object: vm((o) => void (o.spec.memory.size = '33Gi')) },
    expect: { deny: 'spec.memory.size', message: /at most 32Gi/ },
  },
  {
    rule: 'memory per core is within the policy range',
    good: { object: vm((o) => void ((o.spec.cpu.cores = 4), (o.spec.memory.size = '1Gi'))) },
    bad: { object: vm((o) => void ((o.spec.cpu.cores = 4), (o.spec.memory.size = '768Mi'))) },
    expect: { deny: 'spec.memory.size', message: /at least 256Mi per core/ },
  },
  {
    rule: 'a class that does not exist yet is warned about',
    good: { object: vm() },
    bad: { object: vm((o) => void (o.spec.virtualMachineClassName = 'later')) },
    expect: { warn: /VirtualMachineClass later does not exist yet/ },
  },
  {
    rule: 'core fraction Auto needs the vertical pod autoscaler',
    good: { object: vm((o) => void (o.spec.cpu.coreFraction = 'Auto')), world: autoReady },
    bad: { object: vm((o) => void (o.spec.cpu.coreFraction = 'Auto')), world: (w) => void (autoReady(w), (w.apis = [])) },
    expect: { deny: 'spec.cpu.coreFraction', message: /vertical-pod-autoscaler/ },
  },
  {
    rule: 'core fraction Auto needs the in-place resize feature gate',
    good: { object: vm((o) => void (o.spec.cpu.coreFraction = 'Auto')), world: autoReady },
    bad: { object: vm((o) => void (o.spec.cpu.coreFraction = 'Auto')), world: (w) => void w.apis.push(VPA) },
    expect: { deny: 'spec.cpu.coreFraction', message: /HotplugCPUAndMemoryWithInPlaceResize feature gate/ },
  },
  {
    rule: 'core fraction Auto is not in CE',
    good: { object: vm((o) => void (o.spec.cpu.coreFraction = 'Auto')), world: autoReady },
    bad: { object: vm((o) => void (o.spec.cpu.coreFraction = 'Auto')), world: autoReady, facts: { edition: 'CE' } },
    expect: { deny: 'spec.cpu.coreFraction', message: /not available in the CE edition/ },
  },
  {
    rule: 'core fraction Auto needs two fractions below 100% in the policy',
    good: { object: vm((o) => void (o.spec.cpu.coreFraction = 'Auto')), world: autoReady },
    bad: { object: vm((o) => void ((o.spec.cpu = { cores: 10, coreFraction: 'Auto' }), (o.spec.memory.size = '20Gi'))), world: autoReady },
    expect: { deny: 'spec.cpu.coreFraction', message: /at least two core fractions below 100%/ },
  },
]);
