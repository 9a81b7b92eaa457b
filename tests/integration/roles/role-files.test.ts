import { beforeAll, describe, expect, it } from '@jest/globals';
import { kustomize, rulesOf, type Manifest } from '../install/manifests.js';
import { ROLE_LEVELS } from './access-matrix.js';
import { ROLE_NAMES, ROLES_DIR } from './bind-role.js';

const MODULE_GROUPS = new Set(['virtualization.deckhouse.io', 'subresources.virtualization.deckhouse.io', 'storage.virtualization.deckhouse.io']);
let roles = new Map<string, Manifest>();

beforeAll(async () => {
  roles = new Map((await kustomize(ROLES_DIR)).map((m) => [m.metadata.name, m]));
});

describe('the role model manifests', () => {
  it('hold exactly the six ClusterRoles of the access levels', () => {
    expect([...roles.keys()].sort()).toEqual(Object.values(ROLE_NAMES).sort());
    expect([...roles.values()].every((m) => m.kind === 'ClusterRole')).toBe(true);
  });

  it.each(ROLE_LEVELS)('carry the Deckhouse user-authz access-level annotation %s', (level) => {
    expect(roles.get(ROLE_NAMES[level])?.metadata.annotations?.['user-authz.deckhouse.io/access-level']).toBe(level);
  });

  it.each(ROLE_LEVELS.slice(1).map((level, i) => [level, ROLE_LEVELS[i]] as const))(
    'repeat every rule of the level below: %s starts with the rules of %s',
    (level, below) => {
      const lower = rulesOf(roles.get(ROLE_NAMES[below]) as Manifest);
      const upper = rulesOf(roles.get(ROLE_NAMES[level]) as Manifest);
      expect(upper.length).toBeGreaterThan(lower.length);
      expect(upper.slice(0, lower.length)).toEqual(lower);
    },
  );

  it('use no wildcard and no group outside the module API', () => {
    const offending = [...roles.values()].flatMap((role) =>
      rulesOf(role)
        .filter((r) => [...(r.apiGroups ?? []), ...(r.resources ?? []), ...r.verbs].includes('*') || (r.apiGroups ?? []).some((g) => !MODULE_GROUPS.has(g)))
        .map((r) => `${role.metadata.name}: ${JSON.stringify(r)}`),
    );
    expect(offending).toEqual([]);
  });
});
