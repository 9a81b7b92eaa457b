import {
  CLI_MATRIX,
  CLI_SUBRESOURCE,
  CLI_VERBS,
  CLUSTER_SCOPED,
  EXTENDED_MATRIX,
  LETTER_VERBS,
  RESOURCE_MATRIX,
  ROLE_LEVELS,
  SUBRESOURCE_MATRIX,
  ROW_GROUPS,
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

function resourceChecks(rows: Readonly<Record<string, readonly Cell[]>>, column: number): AccessCheck[] {
  return Object.entries(rows).flatMap(([resource, row]) => {
    const granted = cellVerbs(row[column] ?? '-');
    const namespaced = !CLUSTER_SCOPED.has(resource);
    return ALL_VERBS.map((verb) => ({ row: resource, group: ROW_GROUPS[resource] ?? API_GROUP, resource, namespaced, verb, allowed: granted.has(verb) }));
  });
}

function cliChecks(column: number): AccessCheck[] {
  return Object.entries(CLI_MATRIX).flatMap(([command, row]) =>
    CLI_VERBS.map((verb) => ({
      row: command,
      group: SUBRESOURCES_GROUP,
      resource: 'virtualmachines',
      subresource: CLI_SUBRESOURCE[command],
      namespaced: true,
      verb,
      allowed: row[column] === 'Y',
    })),
  );
}

/** The pool subresource rows: every verb checked, allowed only where the row grants it to the level. */
function subresourceChecks(column: number): AccessCheck[] {
  return Object.entries(SUBRESOURCE_MATRIX).flatMap(([row, r]) =>
    ALL_VERBS.map((verb) => ({
      row,
      group: r.group,
      resource: r.resource,
      subresource: r.subresource,
      namespaced: true,
      verb,
      allowed: r.levels[column] === 'Y' && r.verbs.includes(verb),
    })),
  );
}

/** Every cell of one role's column, expanded into one check per verb: of the seed table (resource
 *  and d8 cli rows), or of the rows beyond it (resources and the pool subresources). */
export function expectedAccess(level: RoleLevel, table: 'seed' | 'extended' = 'seed'): AccessCheck[] {
  const column = ROLE_LEVELS.indexOf(level);
  return table === 'seed'
    ? [...resourceChecks(RESOURCE_MATRIX, column), ...cliChecks(column)]
    : [...resourceChecks(EXTENDED_MATRIX, column), ...subresourceChecks(column)];
}
