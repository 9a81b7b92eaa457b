/** The MAC reconcilers' own informers and clients (VirtualMachineMACAddress and its leases), and the cluster OUI. */
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { ObjectMetaSchema } from '../../../../shared/api/k8s/core.js';
import {
  VirtualMachineMACAddressLeaseSchema,
  VirtualMachineMACAddressSchema,
  virtualMachineMACAddress,
  virtualMachineMACAddressLease,
  type VirtualMachineMACAddress,
  type VirtualMachineMACAddressLease,
} from '../../../../shared/api/resources/addresses.js';
import { descriptorOf, type KubeObject, type ResourceClient } from '../../../../shared/kube/index.js';
import { scopesOf } from '../../caches.js';
import type { Wiring } from '../../declaration.js';
import type { ObjectCache } from '../../engine/cache.js';
import { FIELD_MANAGER } from '../../kube/resources.js';
import { VM_UID_LABEL } from '../vm/handlers/ipam.js';
import { VMMAC_UID_LABEL, ouiFromClusterUuid } from './mac.js';

/** Index of leases by the `namespace/name` of the address they refer to. */
export const LEASE_BY_VMMAC = 'vmmac';
/** Index of addresses by the `namespace/uid` of the VM the controller made them for (the uid label). */
export const VMMAC_BY_VM_UID = 'vmuid';

export interface MacParts {
  readonly vmmacs: ObjectCache<VirtualMachineMACAddress>;
  readonly leases: ObjectCache<VirtualMachineMACAddressLease>;
  readonly vmmacClient: ResourceClient<VirtualMachineMACAddress>;
  readonly leaseClient: ResourceClient<VirtualMachineMACAddressLease>;
  /** The random byte source of generated addresses (`pick(256)`). */
  readonly pick: (n: number) => number;
  /** The OUI of generated addresses (CLUSTER_UUID, else the kube-system Namespace's uid), read once. */
  oui(signal: AbortSignal): Promise<string>;
}

const NamespaceSchema = z.looseObject({ apiVersion: z.string().optional(), kind: z.string().optional(), metadata: ObjectMetaSchema });

export function macParts(w: Wiring): MacParts {
  const scopes = scopesOf(w.config);
  const vmmacClient = w.kube.resource(descriptorOf(virtualMachineMACAddress), VirtualMachineMACAddressSchema, FIELD_MANAGER);
  const leaseClient = w.kube.resource(descriptorOf(virtualMachineMACAddressLease), VirtualMachineMACAddressLeaseSchema, FIELD_MANAGER);
  const vmmacs = w.informer(vmmacClient, scopes.namespaced);
  // Leases are cluster objects; every one is watched, since any may hold an address this cluster would generate.
  vmmacs.addIndex(VMMAC_BY_VM_UID, (m) => {
    const uid = m.metadata.labels?.[VM_UID_LABEL];
    return uid === undefined || uid === '' ? [] : [`${m.metadata.namespace ?? ''}/${uid}`];
  });
  const leases = w.informer(leaseClient, {});
  leases.addIndex(LEASE_BY_VMMAC, (l) => {
    const ref = l.spec.virtualMachineMACAddressRef;
    return ref === undefined ? [] : [`${ref.namespace}/${ref.name}`];
  });
  const namespaces = w.kube.resource<KubeObject>(
    { group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false },
    NamespaceSchema,
    FIELD_MANAGER,
  );
  let oui: Promise<string> | undefined;
  return {
    vmmacs,
    leases,
    vmmacClient,
    leaseClient,
    pick: w.ports.macRandom ?? randomInt,
    oui(signal): Promise<string> {
      oui ??= (async () => {
        const uuid = w.config.CLUSTER_UUID ?? (await namespaces.get({ name: 'kube-system' }, { signal })).metadata.uid ?? '';
        const derived = ouiFromClusterUuid(uuid);
        if (derived === undefined) throw new Error(`CLUSTER_UUID ${uuid} is not a UUID: no OUI for MAC addresses`);
        return derived;
      })().catch((err: unknown) => {
        oui = undefined;
        throw err;
      });
      return oui;
    },
  };
}

export { VMMAC_UID_LABEL };
