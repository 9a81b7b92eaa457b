/** Fixtures shared by the rewriter's tests (and the daemon's): data only. */
export const INTERNAL = 'internal.virtualization.deckhouse.io';

/** An AdmissionReview as the apiserver sends it about a renamed VirtualMachine. */
export function renamedVmReview(): {
  apiVersion: string;
  kind: string;
  request: {
    uid: string;
    kind: { group: string; version: string; kind: string };
    requestKind: { group: string; version: string; kind: string };
    resource: { group: string; version: string; resource: string };
    requestResource: { group: string; version: string; resource: string };
    object: { apiVersion: string; kind: string; metadata: { name: string; labels: Record<string, string> } };
    oldObject: null;
  };
} {
  const INT = INTERNAL;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u1',
      kind: { group: INT, version: 'v1', kind: 'InternalVirtualizationVirtualMachine' },
      requestKind: { group: INT, version: 'v1', kind: 'InternalVirtualizationVirtualMachine' },
      resource: { group: INT, version: 'v1', resource: 'internalvirtualizationvirtualmachines' },
      requestResource: { group: INT, version: 'v1', resource: 'internalvirtualizationvirtualmachines' },
      object: { apiVersion: `${INT}/v1`, kind: 'InternalVirtualizationVirtualMachine', metadata: { name: 'vm', labels: { [`kubevirt.${INT}/a`]: 'b' } } },
      oldObject: null,
    },
  };
}
