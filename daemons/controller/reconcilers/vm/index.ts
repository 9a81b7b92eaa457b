import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import type { Deps } from '../../deps.js';
import { Expectations } from '../../engine/expectations.js';
import { clone, handlerChain, type Handler } from '../../engine/reconciler.js';
import type { ReconcileFn } from '../../engine/runner.js';
import { blockDevicesHandler } from './handlers/block-devices.js';
import { classHandler } from './handlers/class.js';
import { deletionHandler } from './handlers/deletion.js';
import { evictHandler } from './handlers/evict.js';
import { filesystemHandler } from './handlers/filesystem.js';
import { guestHandler } from './handlers/guest.js';
import { ipamHandler } from './handlers/ipam.js';
import { kubeVirtConfigHandler } from './handlers/kubevirt-config.js';
import { lifecycleHandler } from './handlers/lifecycle.js';
import { macHandler, type MacPort } from './handlers/mac.js';
import { networkHandler } from './handlers/network.js';
import { powerDecisionHandler } from './handlers/power-decision.js';
import { powerStateHandler } from './handlers/power-state.js';
import { provisioningHandler } from './handlers/provisioning.js';
import { syncKvvmHandler } from './handlers/sync-kvvm.js';
import { syncMetadataHandler } from './handlers/sync-metadata.js';
import { USB_ATTACH_RETRY_MS, usbDevicesHandler } from './handlers/usb-devices.js';
import type { VMState, VMStatus } from './state.js';
import { objectKey } from '../../../../shared/kube/index.js';

/** How long a requested restart of an instance is remembered (until the cache shows the new one). */
const RESTART_MEMORY_MS = 60_000;

/** The VirtualMachine reconciler: its handlers in order, ending in one status write. */
export function vmHandlers(deps: Deps, macs?: MacPort): Handler<VMState>[] {
  const restarts = new Expectations<string>(RESTART_MEMORY_MS);
  const usbRequests = new Expectations<true>(USB_ATTACH_RETRY_MS);
  return [
    deletionHandler(deps, macs),
    classHandler(deps),
    ipamHandler(deps),
    macHandler(deps, macs),
    networkHandler(deps),
    blockDevicesHandler(deps),
    provisioningHandler(deps),
    powerDecisionHandler(deps, restarts),
    kubeVirtConfigHandler(deps),
    syncKvvmHandler(deps),
    powerStateHandler(deps, restarts),
    usbDevicesHandler(deps, usbRequests),
    lifecycleHandler(deps),
    guestHandler(deps),
    filesystemHandler(),
    syncMetadataHandler(deps),
    evictHandler(),
  ];
}

/** The state one pass starts from: the VM as read and a copy of its status. */
export function initVMState(vm: VirtualMachine): VMState {
  return {
    obj: vm,
    key: objectKey(vm.metadata),
    status: clone(vm.status) ?? {},
    waitingFor: [],
    power: { kind: 'none' },
    startPending: false,
  };
}

export function vmReconciler(deps: Deps, macs?: MacPort): ReconcileFn {
  return handlerChain<VirtualMachine, VMStatus, VMState>({
    name: 'vm',
    load: (key) => deps.caches.vms.get(key),
    invalid: (key) => deps.caches.vms.invalid(key),
    init: initVMState,
    handlers: vmHandlers(deps, macs),
    statusOf: (vm) => vm.status,
    writeStatus: async (vm, patch, signal) => {
      const ref = { namespace: vm.metadata.namespace, name: vm.metadata.name ?? '' };
      deps.caches.vms.remember(await deps.clients.vms.patchStatus(ref, patch, { signal }));
    },
  });
}
