/**
 * KubeVirt's names on a virt-launcher pod and on the instance template, as they are stored in the
 * apiserver: virt-controller writes `kubevirt.io`, `kubevirt.io/created-by`, `vm.kubevirt.io/name`
 * and the `kubevirt.io/domain` annotation, and the api-rewriter renames them on the way in. Read by
 * the controller (how the guest ended), the audit (which VM a deleted pod ran), the subresources API
 * (the scale selector) and the demo; written by the simulator. One copy, here; checked against the
 * rewriter's rules (daemons/api-rewriter/rules/names.test.ts) and real virt-controller
 * (tests/integration/kubevirt/real-kubevirt.test.ts).
 */

const KUBEVIRT = 'kubevirt.internal.virtualization.deckhouse.io';

/** Marks every launcher pod: this label with LAUNCHER_VALUE (upstream `kubevirt.io=virt-launcher`). */
export const LAUNCHER_LABEL = KUBEVIRT;
export const LAUNCHER_VALUE = 'virt-launcher';
/** The uid of the instance a launcher pod belongs to (upstream `kubevirt.io/created-by`). */
export const CREATED_BY_LABEL = `${KUBEVIRT}/created-by`;
/** The name of the VM (and instance) a launcher pod runs (upstream `vm.kubevirt.io/name`). */
export const VM_NAME_LABEL = 'vm.internal.virtualization.deckhouse.io/name';
/** The domain (instance) name: an annotation, not a label (upstream `kubevirt.io/domain`). */
export const DOMAIN_ANNOTATION = `${KUBEVIRT}/domain`;
/** The uid of the migration a target pod was made for (upstream `kubevirt.io/migrationJobUID`). */
export const MIGRATION_LABEL = `${KUBEVIRT}/migrationJobUID`;
/** On the instance: the node its guest runs on (upstream `kubevirt.io/nodeName`, virt-controller and virt-handler write it). */
export const NODE_NAME_LABEL = `${KUBEVIRT}/nodeName`;
/** On the instance during a migration: the target node, whose virt-handler prepares it (upstream `kubevirt.io/migrationTargetNodeName`). */
export const MIGRATION_TARGET_NODE_LABEL = `${KUBEVIRT}/migrationTargetNodeName`;
/**
 * On the instance template: live migration allowed although the pod network is bridged (upstream
 * `kubevirt.io/allow-pod-bridge-network-live-migration`). Written by our controller straight to the
 * apiserver, so in its stored name: written as upstream's, virt-controller's next update (through the
 * rewriter) renamed it and our controller put it back, for ever (seen with real KubeVirt).
 */
export const ALLOW_POD_BRIDGE_MIGRATION_ANNOTATION = `${KUBEVIRT}/allow-pod-bridge-network-live-migration`;
/** The container running the guest; its termination message says how the guest ended. */
export const COMPUTE_CONTAINER = 'compute';
/** Template annotation through which Cilium gives the pod (and the guest) the VM's address. */
export const CILIUM_IP_ANNOTATION = 'cni.cilium.io/ipAddress';

/** Label selector of every launcher pod, or of those of one VM. */
export function launcherSelector(vmName?: string): string {
  const all = `${LAUNCHER_LABEL}=${LAUNCHER_VALUE}`;
  return vmName === undefined ? all : `${all},${VM_NAME_LABEL}=${vmName}`;
}

/** The parts of a launcher pod that say whose it is and where it runs. */
export interface LauncherPodLike {
  metadata: {
    name?: string | undefined;
    labels?: Record<string, string> | undefined;
    creationTimestamp?: string | undefined;
    deletionTimestamp?: string | undefined;
  };
  spec?: { nodeName?: string | undefined } | undefined;
}

/** The parts of an instance the active-pod choice reads. */
export interface InstanceLike {
  metadata: { uid?: string | undefined };
  status?: { nodeName?: string | undefined } | undefined;
}

/** The launcher pods of `vmi` (by the created-by label: a pod of an earlier instance of the VM is not one). */
export function podsOf<P extends LauncherPodLike>(vmi: InstanceLike, pods: readonly P[]): P[] {
  return pods.filter((p) => p.metadata.labels?.[CREATED_BY_LABEL] === (vmi.metadata.uid ?? ''));
}

/**
 * The pod the guest runs in now, as KubeVirt finds it: the instance's pod on the instance's node (the
 * newest, not being deleted); before the instance has a node, its first pod that is no migration
 * target. The one answer for the simulator (which pod's end ends the guest) and the controller
 * (`status.virtualMachinePods[].active`, where labels and annotations are propagated).
 */
export function activePod<P extends LauncherPodLike>(vmi: InstanceLike, pods: readonly P[]): P | undefined {
  const mine = podsOf(vmi, pods);
  const node = vmi.status?.nodeName;
  if (node === undefined || node === '') return mine.find((p) => p.metadata.labels?.[MIGRATION_LABEL] === undefined);
  const onNode = mine.filter((p) => p.spec?.nodeName === node && p.metadata.deletionTimestamp === undefined);
  return onNode.sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''))[0];
}

/** On the instance: the launcher's hypervisor versions (the original reads them into `status.versions`). */
export const QEMU_VERSION_ANNOTATION = 'versions.virtualization.deckhouse.io/qemu-version';
export const LIBVIRT_VERSION_ANNOTATION = 'versions.virtualization.deckhouse.io/libvirt-version';
/**
 * On the internal VM, its template, the instance and the running launcher pods, as the original puts
 * it (value empty): Deckhouse's shutdown inhibitor holds a node's shutdown while a pod with it runs
 * there. Taken off a launcher pod a migration left behind.
 */
export const INHIBIT_NODE_SHUTDOWN_LABEL = 'pod.deckhouse.io/inhibit-node-shutdown';
/** The instance's `status.fsFreezeStatus` while the guest agent reports its filesystems frozen (virt-handler writes it; absent once thawed). */
export const FS_FREEZE_STATUS_FROZEN = 'frozen';

/**
 * On the instance: the guest's firmware found nothing to boot from (status False, reason
 * NoBootableDevice). Our contract between the node agent and the controller, which shows it as the
 * VM's Running condition reason `NoBootableDevice`, as the original does.
 */
export const GUEST_BOOTABLE_CONDITION = 'GuestBootable';
export const NO_BOOTABLE_DEVICE_REASON = 'NoBootableDevice';

/**
 * KubeVirt's condition on an instance it could not sync (status False, with reason and message):
 * virt-controller when it cannot create the launcher pod (reason {@link FAILED_CREATE_REASON}),
 * virt-handler (and our node agent) when the domain cannot be started on the node.
 */
export const SYNCHRONIZED_CONDITION = 'Synchronized';
export const FAILED_CREATE_REASON = 'FailedCreate';
