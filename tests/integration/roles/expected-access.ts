import {
  CLI_MATRIX,
  CLI_SUBRESOURCE,
  CLI_VERBS,
  CLUSTER_SCOPED,
  LETTER_VERBS,
  RESOURCE_MATRIX,
  ROLE_LEVELS,
  type Cell,
  type RoleLevel,
} from './access-matrix.js';

export const API_GROUP = 'virtualization.deckhouse.io';
export const SUBRESOURCES_GROUP = 'subresources.virtualization.deckhouse.io';

/** Every Kubernetes verb a cell can speak about: a check is made for each, allowed or not. */
export const ALL_VERBS = Object.values(LETTER_VERBS).flat();

/** One access question with the answer the seed table gives. */
export interface AccessCheck {
  readonly row: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly namespaced: boolean;
  readonly verb: string;
  readonly allowed: boolean;
}

/** The Kubernetes verbs a cell grants (`CR` -> create, get, list, watch; `-` -> none). */
export function cellVerbs(cell: Cell): Set<string> {
  if (cell === '-') return new Set();
  return new Set([...cell].flatMap((letter) => LETTER_VERBS[letter as keyof typeof LETTER_VERBS]));
}

/** Every cell of the table for one role, expanded into one check per verb. */
export function expectedAccess(level: RoleLevel): AccessCheck[] {
  const column = ROLE_LEVELS.indexOf(level);
  const checks: AccessCheck[] = [];
  for (const [resource, row] of Object.entries(RESOURCE_MATRIX)) {
    const granted = cellVerbs(row[column]);
    const namespaced = !CLUSTER_SCOPED.has(resource);
    for (const verb of ALL_VERBS) {
      checks.push({ row: resource, group: API_GROUP, resource, namespaced, verb, allowed: granted.has(verb) });
    }
  }
  for (const [command, row] of Object.entries(CLI_MATRIX)) {
    const subresource = CLI_SUBRESOURCE[command];
    for (const verb of CLI_VERBS) {
      checks.push({ row: command, group: SUBRESOURCES_GROUP, resource: 'virtualmachines', subresource, namespaced: true, verb, allowed: row[column] === 'Y' });
    }
  }
  return checks;
}
