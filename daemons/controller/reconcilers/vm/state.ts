import type { InternalVirtualMachine, InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { VirtualMachineClass } from '../../../../shared/api/resources/virtualmachineclass.js';
import type { ConditionInput } from '../../engine/conditions.js';
import { conditionOn, removeCondition } from '../../engine/conditions.js';
import type { HandlerContext, ReconcileState } from '../../engine/reconciler.js';
import type { ResolvedDevice } from './kvvm/devices.js';
import type { PowerAction } from './power.js';
import { objectKey } from '../../../../shared/kube/index.js';
import { VM_NAME_LABEL } from '../../../../shared/api/internal/launcher.js';
import type { CachePort } from '../../deps.js';
import type { Pod } from '../../kube/resources.js';

export type VMStatus = NonNullable<VirtualMachine['status']>;

/** What the VM handlers learn and hand on to the next ones in one pass. */
export interface VMState extends ReconcileState<VirtualMachine, VMStatus> {
  readonly key: string;
  vmClass?: VirtualMachineClass;
  /** Every block device resolved (undefined while one is missing or not ready). */
  devices?: ResolvedDevice[];
  ipAddress?: string;
  /** The MAC address of each additional network naming a VirtualMachineMACAddress, by its index in spec.networks. */
  macs?: ReadonlyMap<number, string>;
  /** The VirtualMachineMACAddress each additional network takes, by its index in spec.networks. */
  macNames?: ReadonlyMap<number, string>;
  kvvm?: InternalVirtualMachine | undefined;
  kvvmi?: InternalVirtualMachineInstance | undefined;
  /** Why the internal VM cannot be built yet, one line per missing dependency. */
  waitingFor: string[];
  power: PowerAction;
  /** A start is due (shown as phase Pending while stopped). */
  startPending: boolean;
}

/** Set a condition on the VM status copy, stamped with this pass's time and the VM generation. */
export function condition(s: VMState, ctx: HandlerContext, input: ConditionInput): void {
  conditionOn(s, ctx, input);
}

export function dropCondition(s: VMState, type: string): void {
  const list = removeCondition(s.status.conditions, type);
  if (list === undefined) delete s.status.conditions;
  else s.status.conditions = list;
}

/** Index names on the VM cache. */
export const VMIndex = {
  byClass: 'class',
  byDevice: 'device',
  byIPAddress: 'vmip',
  /** `namespace/name` of every USBDevice in spec.usbDevices or status.usbDevices. */
  byUsbDevice: 'usb',
} as const;

/** `Kind/namespace/name` (or `Kind/name` for cluster images): the device index key. */
export function deviceKey(kind: string, namespace: string | undefined, name: string): string {
  return kind === 'ClusterVirtualImage' ? `${kind}/${name}` : `${kind}/${namespace ?? ''}/${name}`;
}

/** Index functions for the VM cache. */
export const vmIndexes: Record<string, (vm: VirtualMachine) => string[]> = {
  [VMIndex.byClass]: (vm) => [vm.spec.virtualMachineClassName],
  [VMIndex.byDevice]: (vm) => vm.spec.blockDeviceRefs.map((r) => deviceKey(r.kind, vm.metadata.namespace, r.name)),
  [VMIndex.byUsbDevice]: (vm) => [
    ...new Set([...(vm.spec.usbDevices ?? []), ...(vm.status?.usbDevices ?? [])].map((d) => objectKey({ namespace: vm.metadata.namespace, name: d.name }))),
  ],
  [VMIndex.byIPAddress]: (vm) => {
    const names = new Set([vm.spec.virtualMachineIPAddressName, vm.status?.virtualMachineIPAddressName]);
    return [...names].filter((n): n is string => n !== undefined && n !== '').map((n) => objectKey({ namespace: vm.metadata.namespace, name: n }));
  },
};

/** Index of the launcher-pod cache: `namespace/vm name` (the pod's VM name label). */
export const POD_BY_VM = 'vm';

export function podVMKeys(pod: Pod): string[] {
  const name = pod.metadata.labels?.[VM_NAME_LABEL];
  return name === undefined ? [] : [objectKey({ namespace: pod.metadata.namespace, name })];
}

/** Every launcher pod of the VM (of any of its instances). */
export function podsOfVM(pods: CachePort<Pod>, vm: VirtualMachine): Pod[] {
  return pods.byIndex(POD_BY_VM, objectKey(vm.metadata));
}
