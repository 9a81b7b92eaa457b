/** Enrichment of the VM record fields from a VirtualMachine, its VirtualDisks and its node. */
import { compactJoin, orUnknown } from './common.js';
import type { Enrichment, NodeView, VMView } from './enrichment.js';
import { UNKNOWN, unknownVMDetails, type VMDetails } from './records.js';

const VIRTUAL_DISK_KIND = 'VirtualDisk';
const HOSTNAME_ADDRESS = 'Hostname';

/** Node addresses other than the hostname, compacted and joined; undefined when there are none. */
export function nodeAddresses(node: NodeView | undefined): string | undefined {
  const addresses = node?.status?.addresses ?? [];
  return compactJoin(addresses.filter((a) => a.type !== HOSTNAME_ADDRESS).map((a) => a.address));
}

/**
 * Storage classes of the VM's VirtualDisks in block-device order. As in the original, one disk that
 * cannot be found leaves the whole field unknown rather than reporting a partial list.
 */
function storageClasses(vm: VMView, namespace: string, enrichment: Enrichment): string | undefined {
  const classes: Array<string | undefined> = [];
  for (const ref of vm.spec?.blockDeviceRefs ?? []) {
    if (ref.kind !== VIRTUAL_DISK_KIND) continue;
    const vd = enrichment.getVD(namespace, ref.name ?? '');
    if (vd === undefined) return undefined;
    classes.push(vd.status?.storageClassName);
  }
  return compactJoin(classes);
}

/** VM record details for `vm` (every field `unknown` when the VM is not known). */
export function vmDetails(vm: VMView | undefined, enrichment: Enrichment): VMDetails {
  const details = unknownVMDetails();
  if (vm === undefined) return details;
  const namespace = vm.metadata?.namespace ?? '';
  const node = vm.status?.nodeName;
  details.virtual_machine_name = orUnknown(vm.metadata?.name);
  details.virtual_machine_namespace = orUnknown(namespace);
  details.virtualmachine_uid = orUnknown(vm.metadata?.uid);
  details.virtualmachine_os = orUnknown(vm.status?.guestOSInfo?.name);
  // The original assigns the versions as they are: a found VM without them gives empty strings.
  details.qemu_version = vm.status?.versions?.qemu ?? '';
  details.libvirt_version = vm.status?.versions?.libvirt ?? '';
  details.storageclasses = storageClasses(vm, namespace, enrichment) ?? UNKNOWN;
  if (node !== undefined && node !== '') details.node_network_address = nodeAddresses(enrichment.getNode(node)) ?? UNKNOWN;
  return details;
}

/** VM record details for the VM `namespace/name`, looked up through the enrichment. */
export function vmDetailsByName(namespace: string, name: string, enrichment: Enrichment): VMDetails {
  return vmDetails(name === '' ? undefined : enrichment.getVM(namespace, name), enrichment);
}
