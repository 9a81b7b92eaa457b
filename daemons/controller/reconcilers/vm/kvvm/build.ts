import { INTERNAL_API_VERSION, type InternalVirtualMachine } from '../../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../../../../shared/api/resources/virtualmachineclass.js';
import { ownerReferenceTo } from '../../../../../shared/kube/index.js';
import { ALLOW_POD_BRIDGE_MIGRATION_ANNOTATION, CILIUM_IP_ANNOTATION } from '../../../../../shared/api/internal/launcher.js';
import { cpuModelOf, effectiveCoreFraction, requestedCpu, topologyOf } from './cpu.js';
import { additionalNetworks, bootOrders, busesOf, diskAndVolume, type ResolvedDevice } from './devices.js';
import { osShapeOf, provisioningOf } from './domain.js';
import { placementOf } from './placement.js';
import { propagatableAnnotations, propagatedLabels } from './propagation.js';

/** Annotations on the internal VM that remember what it was built from (to list pending changes). */
export const LAST_APPLIED_SPEC = 'virtualization.deckhouse.io/vm.last-applied-spec';
export const LAST_APPLIED_CLASS_SPEC = 'virtualization.deckhouse.io/vmclass.last-applied-spec';
export const VM_NAME_LABEL = 'virtualization.deckhouse.io/virtual-machine-name';

export interface BuildInput {
  vm: VirtualMachine;
  vmClass: VirtualMachineClass;
  /** In blockDeviceRefs order. */
  devices: readonly ResolvedDevice[];
  /** The main network address, when IPAM gave one. */
  ipAddress?: string | undefined;
  runStrategy: 'Always' | 'Manual';
  /** The MAC address of each additional network that has one, by its index in spec.networks. */
  macs?: ReadonlyMap<number, string> | undefined;
}

type KVVMSpec = InternalVirtualMachine['spec'];
type Template = KVVMSpec['template'];

/** The internal (KubeVirt) VirtualMachine for a VirtualMachine: a pure function of its inputs. */
export function buildInternalVM(input: BuildInput): InternalVirtualMachine {
  const { vm } = input;
  return {
    apiVersion: INTERNAL_API_VERSION,
    kind: 'InternalVirtualizationVirtualMachine',
    metadata: {
      name: vm.metadata.name,
      namespace: vm.metadata.namespace,
      labels: { ...propagatedLabels(vm.metadata.labels), [VM_NAME_LABEL]: vm.metadata.name ?? '' },
      annotations: {
        ...propagatableAnnotations(vm.metadata.annotations),
        [LAST_APPLIED_SPEC]: JSON.stringify(vm.spec),
        [LAST_APPLIED_CLASS_SPEC]: JSON.stringify(input.vmClass.spec),
      },
      ownerReferences: [{ ...ownerReferenceTo(vm, { controller: true, blockOwnerDeletion: true }) }],
    },
    spec: {
      runStrategy: input.runStrategy,
      // A disk moving to another class: KubeVirt copies the changed claim live (volume migration), as the original asks.
      ...(input.devices.some((d) => 'pvc' in d.source && d.source.migratingFrom !== undefined) ? { updateVolumesStrategy: 'Migration' as const } : {}),
      template: buildTemplate(input),
    },
  };
}

/** The VMI template: everything that takes effect only when the VM (re)starts. */
export function buildTemplate(input: BuildInput): Template {
  const { vm, vmClass } = input;
  const spec = vm.spec;
  const buses = busesOf(spec);
  const os = osShapeOf(spec);
  const topology = topologyOf(spec.cpu.cores);
  const fraction = effectiveCoreFraction(vm, vmClass);
  const orders = bootOrders(spec.blockDeviceRefs);
  const parts = input.devices.map((d, i) => diskAndVolume(d, buses, d.bootOrder ?? orders[i]));
  const provisioning = provisioningOf(spec.provisioning, buses.cdrom, buses.disk);
  if (provisioning !== undefined) parts.push(provisioning);
  // The VM's own labels and annotations first (the original propagates them to the template), ours over them.
  const extra = additionalNetworks(spec.networks ?? [], input.macs, buses.nic);
  const annotations: Record<string, string> = { ...propagatableAnnotations(vm.metadata.annotations), [ALLOW_POD_BRIDGE_MIGRATION_ANNOTATION]: 'true' };
  if (input.ipAddress !== undefined) annotations[CILIUM_IP_ANNOTATION] = input.ipAddress;
  return {
    metadata: {
      labels: { ...propagatedLabels(vm.metadata.labels), [VM_NAME_LABEL]: vm.metadata.name ?? '', 'security.deckhouse.io/skip-pss-check': 'true' },
      annotations,
    },
    spec: {
      domain: {
        cpu: { sockets: topology.sockets, cores: topology.coresPerSocket, threads: 1, ...cpuModelOf(vmClass) },
        memory: { guest: spec.memory.size },
        machine: os.machine,
        ...(os.firmware !== undefined ? { firmware: os.firmware } : {}),
        features: os.features,
        devices: {
          ...os.devices,
          disks: parts.map((p) => p.disk),
          interfaces: [{ name: 'default', model: buses.nic, binding: { name: 'bpfbridge' }, acpiIndex: 1 }, ...extra.map((e) => e.iface)],
          inputs: [{ name: 'default-0', type: 'tablet', bus: 'usb' }],
        },
        resources: {
          requests: { cpu: requestedCpu(spec.cpu.cores, fraction), memory: spec.memory.size },
          limits: { cpu: String(spec.cpu.cores), memory: spec.memory.size },
        },
      },
      volumes: parts.map((p) => p.volume),
      networks: [{ name: 'default', pod: {} }, ...extra.map((e) => e.network)],
      ...placementOf(vm, vmClass),
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds,
      ...(spec.priorityClassName !== undefined ? { priorityClassName: spec.priorityClassName } : {}),
      ...(spec.topologySpreadConstraints !== undefined ? { topologySpreadConstraints: spec.topologySpreadConstraints } : {}),
    },
  };
}
