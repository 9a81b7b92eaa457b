/** VirtualMachineBlockDeviceAttachment validation: immutable, one per device, within the VM's limits. */
import { GROUP } from '../../../shared/api/resources/common.js';
import { VirtualMachineBlockDeviceAttachmentSchema, type VirtualMachineBlockDeviceAttachment } from '../../../shared/api/resources/vmbda.js';
import { onCreate, onUpdate, type Check } from './check.js';
import { changed } from './storage.js';
import { schemaParser, type Validator } from './validator.js';
import { MAX_BLOCK_DEVICES, attachmentsOf } from './virtualmachine/block-devices.js';

type Vmbda = VirtualMachineBlockDeviceAttachment;
const deviceOf = (a: Vmbda): string => `${a.spec.blockDeviceRef.kind}/${a.spec.blockDeviceRef.name}`;

const immutableSpec = onUpdate<Vmbda>('the spec does not change', ({ object }, old, _ctx, out) => {
  if (changed(object.spec, old.spec)) out.deny('spec', 'is immutable; create a new attachment instead');
});

const onePerDevice: Check<Vmbda> = onCreate({
  name: 'no other attachment holds the block device',
  run: async ({ object, namespace }, { lookups }, out) => {
    const others = (await lookups.attachments(namespace ?? '')).filter(
      (a) => a.metadata.name !== object.metadata.name && a.metadata.deletionTimestamp === undefined && deviceOf(a) === deviceOf(object),
    );
    const [other] = others;
    if (other !== undefined) {
      out.deny('spec.blockDeviceRef', `${deviceOf(object)} is already attached by VirtualMachineBlockDeviceAttachment ${other.metadata.name ?? ''}`);
    }
  },
});

const fitsTheVM: Check<Vmbda> = onCreate({
  name: 'the VM can take one more hot-plugged device',
  run: async ({ object, namespace }, { lookups }, out) => {
    const vmName = object.spec.virtualMachineName;
    const vm = await lookups.virtualMachine(namespace ?? '', vmName);
    if (vm === undefined) return;
    if (vm.spec.osType === 'Legacy' && !vm.spec.enableParavirtualization) {
      out.deny('spec.virtualMachineName', `VirtualMachine ${vmName} has osType Legacy without paravirtualization, which does not support hot-plugging`);
    }
    const devices = new Set(vm.spec.blockDeviceRefs.map((r) => `${r.kind}/${r.name}`));
    for (const a of await attachmentsOf(lookups, namespace ?? '', vmName)) devices.add(deviceOf(a));
    devices.add(deviceOf(object));
    if (devices.size > MAX_BLOCK_DEVICES) {
      out.deny('spec.virtualMachineName', `VirtualMachine ${vmName} would have ${devices.size} block devices; at most ${MAX_BLOCK_DEVICES} are supported`);
    }
  },
});

export const vmbdaValidator: Validator<Vmbda> = {
  group: GROUP,
  kind: 'VirtualMachineBlockDeviceAttachment',
  parse: schemaParser(VirtualMachineBlockDeviceAttachmentSchema),
  checks: [immutableSpec, onePerDevice, fitsTheVM],
};
