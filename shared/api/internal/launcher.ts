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
