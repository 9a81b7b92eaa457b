/**
 * Cilium's CiliumNode (cilium.io/v2), as far as the module reads it: the node's addresses, among them
 * its CiliumInternalIP. Read by route-forge (the next hop to each node's VMs) and written by the local
 * platform (which plays Cilium for kwok nodes), so the contract lives here.
 */
import { z } from 'zod';
import type { ResourceDescriptor } from '../../kube/index.js';
import { ObjectMetaSchema } from './core.js';

export const ciliumNodeDescriptor: ResourceDescriptor = { group: 'cilium.io', version: 'v2', plural: 'ciliumnodes', kind: 'CiliumNode', namespaced: false };

export const CiliumNodeSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({ addresses: z.array(z.looseObject({ type: z.string().optional(), ip: z.string().optional() })).optional() }).optional(),
});
export type CiliumNode = z.infer<typeof CiliumNodeSchema>;
