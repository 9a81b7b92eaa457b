/** The VirtualMachine a command acts on, read first so a wrong name fails fast with exit code 3. */
import { virtualMachine } from '../api/resources/virtualmachine.js';
import { descriptorOf, kubeObjectSchema, type KubeObject } from '../kube/index.js';
import type { Connection } from './connection.js';

export const FIELD_MANAGER = 'd8v';

/** The VM's object (metadata only); NotFoundError names it when it does not exist. */
export function getVirtualMachine(conn: Connection, name: string, signal: AbortSignal): Promise<KubeObject> {
  return conn.kube.resource(descriptorOf(virtualMachine), kubeObjectSchema, FIELD_MANAGER).get({ namespace: conn.namespace, name }, { signal });
}
