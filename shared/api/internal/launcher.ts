/**
 * KubeVirt's names on a virt-launcher pod and on the instance template, a contract between the
 * controller (which writes the address annotation and reads how the guest ended) and whatever plays
 * KubeVirt (the simulator builds and reads launcher pods by these names). One copy, here.
 */

/** The uid of the instance a launcher pod belongs to. */
export const CREATED_BY_LABEL = 'kubevirt.io/created-by';
/** The name of that instance. */
export const DOMAIN_LABEL = 'kubevirt.io/domain';
/** Marks every launcher pod: this label with LAUNCHER_VALUE. */
export const LAUNCHER_LABEL = 'kubevirt.io';
export const LAUNCHER_VALUE = 'virt-launcher';
/** The uid of the migration a target pod was made for. */
export const MIGRATION_LABEL = 'kubevirt.io/migrationJobUID';
/** The container running the guest; its termination message says how the guest ended. */
export const COMPUTE_CONTAINER = 'compute';
/** Template annotation through which Cilium gives the pod (and the guest) the VM's address. */
export const CILIUM_IP_ANNOTATION = 'cni.cilium.io/ipAddress';
