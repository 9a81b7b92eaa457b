/** The VirtualMachine a command acts on, read first so a wrong name fails fast with exit code 3. */
import { virtualMachine } from '../api/resources/virtualmachine.js';
import { virtualMachineOperation } from '../api/resources/vmop.js';
import { kubeObjectSchema, type KubeObject, type ResourceDescriptor } from '../kube/index.js';
import type { Connection } from './connection.js';

export const FIELD_MANAGER = 'd8v';

/** REST coordinates of the two public resources the CLI reads and writes. */
export function descriptorOf(def: typeof virtualMachine | typeof virtualMachineOperation): ResourceDescriptor {
  return { group: def.group, version: def.version, plural: def.plural, kind: def.kind, namespaced: true };
}

/** The VM's object (metadata only); NotFoundError names it when it does not exist. */
export function getVirtualMachine(conn: Connection, name: string, signal: AbortSignal): Promise<KubeObject> {
  return conn.kube.resource(descriptorOf(virtualMachine), kubeObjectSchema, FIELD_MANAGER).get({ namespace: conn.namespace, name }, { signal });
}
