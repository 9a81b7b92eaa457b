/** VirtualMachine block devices: uniqueness, boot order, the 16-device limit, hot-plug and images first. */
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineBlockDeviceAttachment } from '../../../../shared/api/resources/vmbda.js';
import type { Lookups } from '../../lookups.js';
import { onUpdate, pure, type Check } from '../check.js';

export const MAX_BLOCK_DEVICES = 16;

type Ref = { readonly kind: string; readonly name: string };
const refKey = (r: Ref): string => `${r.kind}/${r.name}`;

export const uniqueBlockDevices: Check<VirtualMachine> = pure('block devices are listed once with unique boot orders', ({ object }, out) => {
  const seen = new Map<string, number>();
  const orders = new Map<number, number>();
  object.spec.blockDeviceRefs.forEach((ref, i) => {
    const first = seen.get(refKey(ref));
    if (first === undefined) seen.set(refKey(ref), i);
    else out.deny(`spec.blockDeviceRefs[${i}]`, `${refKey(ref)} is already listed at spec.blockDeviceRefs[${first}]`);
    if (ref.bootOrder === undefined) return;
    const other = orders.get(ref.bootOrder);
    if (other === undefined) orders.set(ref.bootOrder, i);
    else out.deny(`spec.blockDeviceRefs[${i}].bootOrder`, `boot order ${ref.bootOrder} is already used by spec.blockDeviceRefs[${other}]`);
  });
});

/** Live attachments of one VM (those being deleted no longer count). */
export async function attachmentsOf(lookups: Lookups, namespace: string, vm: string): Promise<VirtualMachineBlockDeviceAttachment[]> {
  const all = await lookups.attachments(namespace);
  return all.filter((a) => a.spec.virtualMachineName === vm && a.metadata.deletionTimestamp === undefined);
}

export const blockDeviceLimit: Check<VirtualMachine> = {
  name: `a VM has at most ${MAX_BLOCK_DEVICES} block devices including attachments`,
  run: async ({ object, namespace }, { lookups }, out) => {
    const inSpec = new Set(object.spec.blockDeviceRefs.map(refKey));
    const attached = await attachmentsOf(lookups, namespace ?? '', object.metadata.name ?? '');
    const extra = new Set(attached.map((a) => refKey(a.spec.blockDeviceRef)).filter((k) => !inSpec.has(k)));
    const total = inSpec.size + extra.size;
    if (total > MAX_BLOCK_DEVICES) {
      out.deny(
        'spec.blockDeviceRefs',
        `the VM would have ${total} block devices (${inSpec.size} in spec, ${extra.size} attached by VirtualMachineBlockDeviceAttachments); at most ${MAX_BLOCK_DEVICES} are supported`,
      );
    }
  },
};

export const notAttachedTwice: Check<VirtualMachine> = {
  name: 'a block device added to the spec is not attached by a VirtualMachineBlockDeviceAttachment',
  run: async ({ object, oldObject, namespace }, { lookups }, out) => {
    const before = new Set((oldObject?.spec.blockDeviceRefs ?? []).map(refKey));
    const added = object.spec.blockDeviceRefs.map((r, i) => ({ key: refKey(r), i })).filter((r) => !before.has(r.key));
    if (added.length === 0) return;
    const attached = await attachmentsOf(lookups, namespace ?? '', object.metadata.name ?? '');
    for (const { key, i } of added) {
      const holder = attached.find((a) => refKey(a.spec.blockDeviceRef) === key);
      if (holder === undefined) continue;
      out.deny(
        `spec.blockDeviceRefs[${i}]`,
        `${key} is already attached by VirtualMachineBlockDeviceAttachment ${holder.metadata.name ?? ''}; delete the attachment first`,
      );
    }
  },
};

export const imageFirstIsCdrom: Check<VirtualMachine> = {
  name: 'the first block device is not a non-CD-ROM image',
  run: async ({ object, oldObject, namespace }, { lookups }, out) => {
    const first = object.spec.blockDeviceRefs[0];
    const previous = oldObject?.spec.blockDeviceRefs[0];
    if (first === undefined || (previous !== undefined && refKey(previous) === refKey(first))) return;
    let image: { status?: { phase?: string; cdrom?: boolean } | undefined } | undefined;
    if (first.kind === 'VirtualImage') image = await lookups.virtualImage(namespace ?? '', first.name);
    else if (first.kind === 'ClusterVirtualImage') image = await lookups.clusterVirtualImage(first.name);
    if (image?.status?.phase !== 'Ready' || image.status.cdrom === true) return;
    out.deny('spec.blockDeviceRefs[0]', `a non-CDROM ${first.kind} cannot occupy the first position in block devices`);
  },
};

export const hotplugNeedsParavirtualization: Check<VirtualMachine> = onUpdate(
  'hot-plugging is not used without paravirtualization',
  ({ object }, old, _ctx, out) => {
    if (object.spec.enableParavirtualization || stopped(old)) return;
    if (JSON.stringify(object.spec.blockDeviceRefs) === JSON.stringify(old.spec.blockDeviceRefs)) return;
    out.warn('hot-plugging block devices is not supported with enableParavirtualization=false; the change applies after a restart', 'spec.blockDeviceRefs');
  },
);

function stopped(vm: VirtualMachine): boolean {
  return vm.status?.phase === undefined || vm.status.phase === 'Stopped' || vm.status.phase === 'Pending';
}
