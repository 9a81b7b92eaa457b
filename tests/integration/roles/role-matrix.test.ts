import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freshNamespace, newKubeConfig } from '../../env/index.js';
import { ROLE_LEVELS } from './access-matrix.js';
import { applyRoles, bindToFreshUser, isAllowed, ROLE_NAMES } from './bind-role.js';
import { expectedAccess, type AccessCheck } from './expected-access.js';

const kc = newKubeConfig();
const users = new Map<string, string>();
const unbinders: Array<() => Promise<void>> = [];
let namespace = '';

const describeCheck = (c: AccessCheck): string =>
  `${c.row}: ${c.verb} ${c.resource}${c.subresource ? `/${c.subresource}` : ''} should be ${c.allowed ? 'allowed' : 'denied'}`;

beforeAll(async () => {
  await applyRoles();
  namespace = await freshNamespace('roles');
  for (const level of ROLE_LEVELS) {
    const { user, unbind } = await bindToFreshUser(kc, ROLE_NAMES[level]);
    users.set(level, user);
    unbinders.push(unbind);
  }
});

afterAll(async () => {
  await Promise.all(unbinders.map((unbind) => unbind()));
});

describe.each(ROLE_LEVELS)('the %s role bound alone to a user', (level) => {
  it.each([
    ['the seed access matrix', 'seed'],
    ['the rows beyond the seed table', 'extended'],
  ] as const)('gives exactly the rights of its column of %s, cell by cell', async (_what, table) => {
    const user = users.get(level) ?? '';
    const checks = expectedAccess(level, table);
    const answers = await Promise.all(checks.map((c) => isAllowed(kc, user, c, namespace)));
    const wrong = checks.filter((c, i) => answers[i] !== c.allowed).map(describeCheck);
    expect(wrong).toEqual([]);
  });

  it.each([
    ['secrets', '', 'get'],
    ['pods', '', 'list'],
    ['internalvirtualizationkubevirts', 'internal.virtualization.deckhouse.io', 'get'],
    ['virtualmachines', 'virtualization.deckhouse.io', 'escalate'],
  ])('grants nothing outside the matrix: %s (%s) %s is denied', async (resource, group, verb) => {
    const check = { group, resource, verb, namespaced: true };
    await expect(isAllowed(kc, users.get(level) ?? '', check, namespace)).resolves.toBe(false);
  });
});
