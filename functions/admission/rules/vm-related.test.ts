/** Attachment, class, address, lease and operation rules: one conforming and one violating case each. */
import { emptyWorld, NO_SETTINGS, type World } from '../testing/fake-lookups.js';
import { lease, typed, vmbda, vmClass, vmip, vmop } from '../testing/objects.js';
import { ruleTable } from '../testing/rule-table.js';
import { vmbdaValidator } from './vmbda.js';
import { vmClassValidator } from './vmclass.js';
import { vmipLeaseValidator, vmipValidator } from './vmip.js';
import { vmopValidator } from './vmop.js';

function vmAndAttachments(w: World, attached = 0): void {
  w.vms.push(typed.vm());
  for (let i = 0; i < attached; i += 1) {
    w.attachments.push(typed.vmbda((a) => void ((a.metadata.name = `a-${i}`), (a.spec.blockDeviceRef.name = `d-${i}`))));
  }
}

ruleTable(vmbdaValidator, emptyWorld, [
  {
    rule: 'the attachment spec is immutable',
    good: { object: vmbda(), old: vmbda() },
    bad: { object: vmbda((o) => void (o.spec.virtualMachineName = 'vm2')), old: vmbda() },
    expect: { deny: 'spec', message: /immutable/ },
  },
  {
    rule: 'one attachment per block device',
    good: {
      object: vmbda(),
      world: (w) => void w.attachments.push(typed.vmbda((a) => void ((a.metadata.name = 'other'), (a.spec.blockDeviceRef.name = 'other')))),
    },
    bad: { object: vmbda(), world: (w) => void w.attachments.push(typed.vmbda((a) => void (a.metadata.name = 'other'))) },
    expect: { deny: 'spec.blockDeviceRef', message: /VirtualDisk\/data is already attached by VirtualMachineBlockDeviceAttachment other/ },
  },
  {
    rule: 'the VM stays within 16 block devices',
    good: { object: vmbda(), world: (w) => vmAndAttachments(w, 14) },
    bad: { object: vmbda(), world: (w) => vmAndAttachments(w, 15) },
    expect: { deny: 'spec.virtualMachineName', message: /would have 17 block devices/ },
  },
  {
    rule: 'a Legacy VM without paravirtualization takes no hot-plugged device',
    good: { object: vmbda(), world: (w) => void w.vms.push(typed.vm((o) => void (o.spec.osType = 'Legacy'))) },
    bad: { object: vmbda(), world: (w) => void w.vms.push(typed.vm((o) => void ((o.spec.osType = 'Legacy'), (o.spec.enableParavirtualization = false)))) },
    expect: { deny: 'spec.virtualMachineName', message: /does not support hot-plugging/ },
  },
]);

const notDefault = (o: ReturnType<typeof vmClass>): void => void (o.metadata.annotations = {});
const policy =
  (coreFractions: number[], defaultCoreFraction?: number | string) =>
  (o: ReturnType<typeof vmClass>): void => {
    o.spec.sizingPolicies = [{ cores: { min: 1, max: 4 }, coreFractions, ...(defaultCoreFraction === undefined ? {} : { defaultCoreFraction }) }];
  };

ruleTable(vmClassValidator, emptyWorld, [
  {
    rule: 'only one class is the default',
    good: { object: vmClass(), world: (w) => void w.classes.push(typed.vmClass((o) => void ((o.metadata.name = 'other'), notDefault(o)))) },
    bad: { object: vmClass(), world: (w) => void w.classes.push(typed.vmClass((o) => void (o.metadata.name = 'other'))) },
    expect: { deny: 'metadata.annotations[virtualmachineclass.virtualization.deckhouse.io/is-default-class]', message: /other is already the default class/ },
  },
  {
    rule: 'sizing policy core ranges do not overlap',
    good: { object: vmClass() },
    bad: { object: vmClass((o) => void o.spec.sizingPolicies?.push({ cores: { min: 8, max: 12 } })) },
    expect: { deny: 'spec.sizingPolicies[4].cores', message: /cpu crosses: 8-12 overlaps spec.sizingPolicies\[1\] \(5-8\)/ },
  },
  {
    rule: "the default core fraction is one of the policy's fractions",
    good: { object: vmClass(policy([10, 50, 100], 50)) },
    bad: { object: vmClass(policy([10, 50, 100], 20)) },
    expect: { deny: 'spec.sizingPolicies[0].defaultCoreFraction', message: /20 is not one of the policy's coreFractions/ },
  },
  {
    rule: 'a default core fraction Auto needs two fractions below 100',
    good: {
      object: vmClass(policy([10, 50, 100], 'Auto')),
      world: (w) =>
        void (
          w.apis.push('autoscaling.k8s.io/v1/verticalpodautoscalers'),
          (w.settings = { ...w.settings, featureGates: ['HotplugCPUAndMemoryWithInPlaceResize'] })
        ),
    },
    bad: {
      object: vmClass(policy([50, 100], 'Auto')),
      world: (w) =>
        void (
          w.apis.push('autoscaling.k8s.io/v1/verticalpodautoscalers'),
          (w.settings = { ...w.settings, featureGates: ['HotplugCPUAndMemoryWithInPlaceResize'] })
        ),
    },
    expect: { deny: 'spec.sizingPolicies[0].defaultCoreFraction', message: /at least two coreFractions below 100/ },
  },
]);

const staticIP = (ip: string) => vmip((o) => void (o.spec = { type: 'Static', staticIP: ip }));
const bound = (address: string, type: 'Auto' | 'Static' = 'Auto') =>
  vmip((o) => void ((o.spec = type === 'Auto' ? { type } : { type, staticIP: address }), (o.status = { phase: 'Bound', address })));

ruleTable(vmipValidator, emptyWorld, [
  {
    rule: 'addresses need virtualMachineCIDRs',
    good: { object: vmip() },
    bad: { object: vmip(), world: (w) => void (w.settings = NO_SETTINGS) },
    expect: { deny: '', message: /needs virtualMachineCIDRs/ },
  },
  {
    rule: 'a Static address names a valid IP',
    good: { object: staticIP('10.66.0.5') },
    bad: { object: staticIP('10.66.0.500') },
    expect: { deny: 'spec.staticIP', message: /not a valid IPv4 address/ },
  },
  {
    rule: 'an Auto address names no IP',
    good: { object: vmip() },
    bad: { object: vmip((o) => void (o.spec = { type: 'Auto', staticIP: '10.66.0.5' })) },
    expect: { deny: 'spec.staticIP', message: /must be empty for type Auto/ },
  },
  {
    rule: 'a new Static address is inside virtualMachineCIDRs',
    good: { object: staticIP('10.66.255.254') },
    bad: { object: staticIP('10.66.255.255') },
    expect: { deny: 'spec.staticIP', message: /outside virtualMachineCIDRs \(10.66.0.0\/16\) or is a network or broadcast address/ },
  },
  {
    rule: 'a changed Static address outside virtualMachineCIDRs is warned about',
    good: { object: staticIP('10.66.0.6'), old: staticIP('10.66.0.5') },
    bad: { object: staticIP('10.67.0.6'), old: staticIP('10.66.0.5') },
    expect: { warn: /outside virtualMachineCIDRs/ },
  },
  {
    rule: 'a leased address that is not released is refused',
    good: { object: staticIP('10.66.0.5'), world: (w) => void w.leases.push(typed.lease('10.66.0.5', (l) => void (l.status = { phase: 'Released' }))) },
    bad: { object: staticIP('10.66.0.5'), world: (w) => void w.leases.push(typed.lease('10.66.0.5')) },
    expect: { deny: 'spec.staticIP', message: /already leased by VirtualMachineIPAddress ns1\/other/ },
  },
  {
    rule: 'the type changes only from Auto to Static with the assigned address',
    good: { object: staticIP('10.66.0.7'), old: bound('10.66.0.7') },
    bad: { object: staticIP('10.66.0.8'), old: bound('10.66.0.7') },
    expect: { deny: 'spec.type', message: /only from Auto to Static, with staticIP 10.66.0.7/ },
  },
  {
    rule: 'a bound Static address keeps its IP',
    good: { object: staticIP('10.66.0.9'), old: staticIP('10.66.0.7') },
    bad: { object: staticIP('10.66.0.9'), old: bound('10.66.0.7', 'Static') },
    expect: { deny: 'spec.staticIP', message: /immutable while the address is bound/ },
  },
]);

ruleTable(vmipLeaseValidator, emptyWorld, [
  {
    rule: 'a lease name encodes an IP address',
    good: { object: lease('10.66.0.5') },
    bad: { object: lease('10.66.0.5', (o) => void (o.metadata.name = 'ip-10-66-0-500')) },
    expect: { deny: 'metadata.name', message: /does not encode an IPv4 address/ },
  },
]);

const active =
  (type: 'Start' | 'Stop' | 'Restart' | 'Migrate', force?: boolean) =>
  (w: World): void =>
    void w.operations.push(
      typed.vmop(
        (o) =>
          void (
            (o.metadata.name = 'earlier'),
            (o.spec = { type, virtualMachineName: 'vm1', ...(force === undefined ? {} : { force }) }),
            (o.status = { phase: 'InProgress' })
          ),
      ),
    );

ruleTable(vmopValidator, emptyWorld, [
  {
    rule: 'migration node selectors are not in CE',
    good: { object: vmop((o) => void (o.spec = { type: 'Migrate', virtualMachineName: 'vm1', migrate: { nodeSelector: { zone: 'a' } } })) },
    bad: {
      object: vmop((o) => void (o.spec = { type: 'Migrate', virtualMachineName: 'vm1', migrate: { nodeSelector: { zone: 'a' } } })),
      facts: { edition: 'CE' },
    },
    expect: { deny: 'spec.migrate.nodeSelector', message: /not available in the CE edition/ },
  },
  {
    rule: 'migration node selectors are valid labels',
    good: {
      object: vmop((o) => void (o.spec = { type: 'Migrate', virtualMachineName: 'vm1', migrate: { nodeSelector: { 'topology.kubernetes.io/zone': 'a-1' } } })),
    },
    bad: { object: vmop((o) => void (o.spec = { type: 'Migrate', virtualMachineName: 'vm1', migrate: { nodeSelector: { zone: 'a b' } } })) },
    expect: { deny: 'spec.migrate.nodeSelector[zone]', message: /label value/ },
  },
  {
    rule: 'one operation at a time per VM unless the new one supersedes',
    good: { object: vmop((o) => void (o.spec = { type: 'Stop', virtualMachineName: 'vm1' })), world: active('Start') },
    bad: { object: vmop((o) => void (o.spec = { type: 'Start', virtualMachineName: 'vm1' })), world: active('Stop') },
    expect: { deny: 'spec.virtualMachineName', message: /earlier \(Stop\) is still in progress/ },
  },
  {
    rule: 'only a forced stop or restart supersedes a graceful one',
    good: { object: vmop((o) => void (o.spec = { type: 'Stop', virtualMachineName: 'vm1', force: true })), world: active('Restart', false) },
    bad: { object: vmop((o) => void (o.spec = { type: 'Stop', virtualMachineName: 'vm1' })), world: active('Restart', false) },
    expect: { deny: 'spec.virtualMachineName', message: /earlier \(Restart\) is still in progress/ },
  },
  {
    rule: 'in CE a VM with a ReadWriteOnce disk is not migrated',
    good: {
      object: vmop((o) => void (o.spec = { type: 'Migrate', virtualMachineName: 'vm1' })),
      facts: { edition: 'CE' },
      world: (w) => rwoDisk(w, 'ReadWriteMany'),
    },
    bad: {
      object: vmop((o) => void (o.spec = { type: 'Evict', virtualMachineName: 'vm1' })),
      facts: { edition: 'CE' },
      world: (w) => rwoDisk(w, 'ReadWriteOnce'),
    },
    expect: { deny: 'spec.type', message: /VirtualDisk root is on a ReadWriteOnce volume/ },
  },
]);

function rwoDisk(w: World, mode: string): void {
  w.vms.push(typed.vm());
  w.disks.push(typed.disk((d) => void (d.status = { phase: 'Ready', target: { persistentVolumeClaimName: 'vd-root-pvc' } })));
  w.pvcs.push({ namespace: 'ns1', name: 'vd-root-pvc', storageClassName: 'local', size: '10Gi', accessModes: [mode] });
}
