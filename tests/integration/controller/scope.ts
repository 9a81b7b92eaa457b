/** The scope of one test: its namespace and the token that marks its cluster-scoped objects (no jest here: the benchmark imports it). */
import { randomBytes } from 'node:crypto';

/** Label that scopes cluster-scoped objects (classes, nodes, cluster images) to one test. */
export const SCOPE_LABEL = 'test.virtualization.deckhouse.io/scope';

export interface Scope {
  namespace: string;
  /** A unique token for cluster-scoped names and the scope label value. */
  id: string;
}

export function newScope(namespace: string): Scope {
  return { namespace, id: randomBytes(3).toString('hex') };
}
