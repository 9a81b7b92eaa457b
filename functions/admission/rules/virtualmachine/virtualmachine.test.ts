/** VirtualMachine rules on metadata, block devices and the guest: one conforming and one violating case each. */
import { ruleTable } from '../../testing/rule-table.js';
import { typed, vm } from '../../testing/objects.js';
import { virtualMachineValidator } from './index.js';
import { vmWorld } from './fixtures.js';

const running = (o: { status?: unknown }): void => {
  o.status = { phase: 'Running', nodeName: 'node-a' };
};

ruleTable(virtualMachineValidator, vmWorld, [
  {
    rule: 'the name is at most 63 characters',
    good: { object: vm((o) => void (o.metadata.name = 'a'.repeat(63))) },
    bad: { object: vm((o) => void (o.metadata.name = 'a'.repeat(64))) },
    expect: { deny: 'metadata.name', message: /no more than 63/ },
  },
  {
    rule: 'users do not add reserved label keys',
    good: {
      object: vm((o) => void (o.metadata.labels = { app: 'web', 'virtualization.deckhouse.io/x': 'y' })),
      username: 'system:serviceaccount:d8-virtualization:virtualization-controller',
    },
    bad: { object: vm((o) => void (o.metadata.labels = { 'virtualization.deckhouse.io/x': 'y' })) },
    expect: { deny: 'metadata.labels[virtualization.deckhouse.io/x]', message: /reserved for the module/ },
  },
  {
    rule: 'users do not change reserved annotation keys, existing ones stay',
    good: {
      object: vm((o) => void (o.metadata.annotations = { 'virtualization.deckhouse.io/restore-power-state': 'on', note: 'new' })),
      old: vm((o) => void (o.metadata.annotations = { 'virtualization.deckhouse.io/restore-power-state': 'on' })),
    },
    bad: {
      object: vm((o) => void (o.metadata.annotations = { 'virtualization.deckhouse.io/restore-power-state': 'off' })),
      old: vm((o) => void (o.metadata.annotations = { 'virtualization.deckhouse.io/restore-power-state': 'on' })),
    },
    expect: { deny: 'metadata.annotations[virtualization.deckhouse.io/restore-power-state]', message: /reserved/ },
  },
  {
    rule: 'block devices are listed once',
    good: { object: vm((o) => void o.spec.blockDeviceRefs.push({ kind: 'VirtualDisk', name: 'data' })) },
    bad: { object: vm((o) => void o.spec.blockDeviceRefs.push({ kind: 'VirtualDisk', name: 'root' })) },
    expect: { deny: 'spec.blockDeviceRefs[1]', message: /VirtualDisk\/root is already listed at spec.blockDeviceRefs\[0\]/ },
  },
  {
    rule: 'boot orders are unique',
    good: {
      object: vm(
        (o) =>
          void (o.spec.blockDeviceRefs = [
            { kind: 'VirtualDisk', name: 'root', bootOrder: 1 },
            { kind: 'VirtualDisk', name: 'data', bootOrder: 2 },
          ]),
      ),
    },
    bad: {
      object: vm(
        (o) =>
          void (o.spec.blockDeviceRefs = [
            { kind: 'VirtualDisk', name: 'root', bootOrder: 1 },
            { kind: 'VirtualDisk', name: 'data', bootOrder: 1 },
          ]),
      ),
    },
    expect: { deny: 'spec.blockDeviceRefs[1].bootOrder', message: /boot order 1 is already used/ },
  },
  {
    rule: 'a Ready non-CD-ROM image is not the first block device',
    good: {
      object: vm((o) => void o.spec.blockDeviceRefs.unshift({ kind: 'VirtualImage', name: 'iso' })),
      world: (w) => void w.images.push(typed.image((i) => void ((i.metadata.name = 'iso'), (i.status = { phase: 'Ready', cdrom: true })))),
    },
    bad: {
      object: vm((o) => void o.spec.blockDeviceRefs.unshift({ kind: 'ClusterVirtualImage', name: 'ubuntu' })),
      world: (w) => void w.clusterImages.push(typed.clusterImage((i) => void (i.status = { phase: 'Ready', cdrom: false }))),
    },
    expect: { deny: 'spec.blockDeviceRefs[0]', message: /non-CDROM ClusterVirtualImage cannot occupy the first position/ },
  },
  {
    rule: 'block devices and attachments stay within 16',
    good: { object: vm(), world: (w) => attach(w, 15) },
    bad: { object: vm(), world: (w) => attach(w, 16) },
    expect: { deny: 'spec.blockDeviceRefs', message: /17 block devices \(1 in spec, 16 attached/ },
  },
  {
    rule: 'a device added to the spec is not attached by an attachment',
    good: { object: vm((o) => void o.spec.blockDeviceRefs.push({ kind: 'VirtualDisk', name: 'other' })), old: vm(), world: (w) => attach(w, 1) },
    bad: { object: vm((o) => void o.spec.blockDeviceRefs.push({ kind: 'VirtualDisk', name: 'disk-0' })), old: vm(), world: (w) => attach(w, 1) },
    expect: { deny: 'spec.blockDeviceRefs[1]', message: /already attached by VirtualMachineBlockDeviceAttachment attach-0/ },
  },
  {
    rule: 'hot-plugging without paravirtualization is warned about',
    good: {
      object: vm((o) => void ((o.spec.enableParavirtualization = false), o.spec.blockDeviceRefs.push({ kind: 'VirtualDisk', name: 'data' }))),
      old: vm((o) => void ((o.spec.enableParavirtualization = false), (o.status = { phase: 'Stopped' }))),
    },
    bad: {
      object: vm((o) => void ((o.spec.enableParavirtualization = false), o.spec.blockDeviceRefs.push({ kind: 'VirtualDisk', name: 'data' }))),
      old: vm((o) => void ((o.spec.enableParavirtualization = false), running(o))),
    },
    expect: { warn: /hot-plugging block devices is not supported/ },
  },
  {
    rule: 'a Legacy guest with paravirtualization is warned about',
    good: { object: vm((o) => void ((o.spec.osType = 'Legacy'), (o.spec.enableParavirtualization = false))) },
    bad: { object: vm((o) => void (o.spec.osType = 'Legacy')) },
    expect: { warn: /Legacy with enableParavirtualization=true/ },
  },
  {
    rule: 'inline cloud-init user data starts with a cloud-init header',
    good: { object: vm((o) => void (o.spec.provisioning = { type: 'UserData', userData: '#cloud-config\nusers: []\n' })) },
    bad: { object: vm((o) => void (o.spec.provisioning = { type: 'UserData', userData: 'users: []\n' })) },
    expect: { warn: /does not start with #cloud-config/ },
  },
]);

function attach(w: ReturnType<typeof vmWorld>, count: number): void {
  for (let i = 0; i < count; i += 1) {
    w.attachments.push(typed.vmbda((a) => void ((a.metadata.name = `attach-${i}`), (a.spec.blockDeviceRef.name = `disk-${i}`))));
  }
}
