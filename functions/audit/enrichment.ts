/**
 * The narrow lookup interface the record builders enrich through. Every getter answers from local
 * state (informer stores, the deleted-objects cache) and returns undefined when the object is not
 * known, for whatever reason (never existed, not synced yet, apiserver unreachable). The views list
 * only the fields the builders read, so full API objects satisfy them structurally.
 */

export interface MetaView {
  name?: string | undefined;
  namespace?: string | undefined;
  uid?: string | undefined;
  labels?: Record<string, string> | undefined;
  annotations?: Record<string, string> | undefined;
}

export interface VMView {
  metadata?: MetaView | undefined;
  spec?: { blockDeviceRefs?: Array<{ kind?: string | undefined; name?: string | undefined }> | undefined } | undefined;
  status?:
    | {
        nodeName?: string | undefined;
        guestOSInfo?: { name?: string | undefined } | undefined;
        versions?: { qemu?: string | undefined; libvirt?: string | undefined } | undefined;
      }
    | undefined;
}

export interface VDView {
  metadata?: MetaView | undefined;
  status?: { storageClassName?: string | undefined } | undefined;
}

export interface VMOPView {
  metadata?: MetaView | undefined;
  spec?: { type?: string | undefined; virtualMachineName?: string | undefined } | undefined;
}

export interface ContainerStatusView {
  name?: string | undefined;
  state?: { terminated?: { message?: string | undefined } | undefined } | undefined;
}

export interface PodView {
  metadata?: MetaView | undefined;
  spec?: { nodeName?: string | undefined } | undefined;
  status?: { containerStatuses?: ContainerStatusView[] | undefined } | undefined;
}

export interface NodeView {
  metadata?: MetaView | undefined;
  status?: { addresses?: Array<{ type?: string | undefined; address?: string | undefined }> | undefined } | undefined;
}

/** deckhouse.io/v1alpha1 Module: only `properties.version` is read. */
export interface ModuleView {
  metadata?: MetaView | undefined;
  properties?: { version?: string | undefined } | undefined;
}

export interface ModuleConfigView {
  metadata?: MetaView | undefined;
  spec?: { enabled?: boolean | null | undefined } | undefined;
}

/** internal.virtualization.deckhouse.io/v1 InternalVirtualizationVirtualMachineInstance: metadata only. */
export interface InternalVMIView {
  metadata?: MetaView | undefined;
}

/** The requesting user as the audit event names it. */
export interface UserRef {
  username: string;
  groups?: string[] | undefined;
}

export interface Enrichment {
  getVM(namespace: string, name: string): VMView | undefined;
  getVD(namespace: string, name: string): VDView | undefined;
  getVMOP(namespace: string, name: string): VMOPView | undefined;
  getPod(namespace: string, name: string): PodView | undefined;
  getNode(name: string): NodeView | undefined;
  getModule(name: string): ModuleView | undefined;
  getModuleConfig(name: string): ModuleConfigView | undefined;
  getInternalVMI(namespace: string, name: string): InternalVMIView | undefined;
  /**
   * Whether the user may update ModuleConfigs or VirtualMachineClasses (a SubjectAccessReview in the
   * real implementation); undefined when it cannot be determined.
   */
  isAdmin(user: UserRef): Promise<boolean | undefined>;
}

/** Enrichment that knows nothing: every lookup is undefined (AUDIT_ENRICHMENT=none). */
export const noEnrichment: Enrichment = {
  getVM: () => undefined,
  getVD: () => undefined,
  getVMOP: () => undefined,
  getPod: () => undefined,
  getNode: () => undefined,
  getModule: () => undefined,
  getModuleConfig: () => undefined,
  getInternalVMI: () => undefined,
  isAdmin: () => Promise.resolve(undefined),
};
