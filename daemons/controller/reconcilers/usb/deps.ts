/** What the three USB reconcilers share: their dependencies, indexes and small helpers. */
import type { Handler } from '../../engine/reconciler.js';
import type { NodeUSBDevice, USBDevice } from '../../../../shared/api/resources/usb.js';
import type { VirtualMachine } from '../../../../shared/api/resources/virtualmachine.js';
import { AlreadyExistsError, NotFoundError } from '../../../../shared/errors/index.js';
import { ownerReferenceTo, type KubeObject, type ResourcePort } from '../../../../shared/kube/index.js';
import type { Scope } from '../../caches.js';
import type { ResourceClaimTemplate, ResourceSlice } from '../../../../shared/api/k8s/resource.js';
import type { CachePort } from '../../deps.js';
import type { Node } from '../../kube/resources.js';

export const UsbIndex = { slicesByPool: 'pool', usbDevicesByName: 'name', nodeDevicesByNamespace: 'assignedNamespace' } as const;

export interface UsbDeps {
  caches: {
    slices: CachePort<ResourceSlice>;
    nodeDevices: CachePort<NodeUSBDevice>;
    usbDevices: CachePort<USBDevice>;
    namespaces: CachePort<KubeObject>;
    templates: CachePort<ResourceClaimTemplate>;
    /** The controller's VMs (absent when these reconcilers run alone): Attached and deletion follow them. */
    vms?: CachePort<VirtualMachine>;
    /** Nodes in the cluster scope: whose slices are ours, and their USB/IP port annotations. */
    nodes: CachePort<Node>;
  };
  /** The controller's scopes (`scopesOf(config)`); the caches above are already limited to them. */
  scopes: { namespaced: Scope; clusterScoped: Scope };
  clients: {
    nodeDevices: ResourcePort<NodeUSBDevice>;
    usbDevices: ResourcePort<USBDevice>;
    templates: ResourcePort<ResourceClaimTemplate>;
  };
}

/** An ownerReference as a plain object (the zod metadata type wants one). */
export const ownerRef = (owner: KubeObject, opts?: Parameters<typeof ownerReferenceTo>[1]): Record<string, unknown> & ReturnType<typeof ownerReferenceTo> => ({
  ...ownerReferenceTo(owner, opts),
});

export const ignoreNotFound = (err: unknown): void => {
  if (!(err instanceof NotFoundError)) throw err;
};
export const ignoreExists = (err: unknown): void => {
  if (!(err instanceof AlreadyExistsError)) throw err;
};

/** Whether a namespace is in the namespaced scope (WATCH_NAMESPACE, or any when unset). */
export function namespaceInScope(deps: Pick<UsbDeps, 'scopes'>, namespace: string): boolean {
  const watched = deps.scopes.namespaced.namespace;
  return watched === undefined || watched === namespace;
}

/** Every reconcile records the generation it saw. */
export function observed<S extends { obj: KubeObject; status: { observedGeneration?: number | undefined } }>(): Handler<S> {
  return {
    name: 'observed',
    handle(s): void {
      if (s.obj.metadata.generation !== undefined) s.status.observedGeneration = s.obj.metadata.generation;
    },
  };
}
