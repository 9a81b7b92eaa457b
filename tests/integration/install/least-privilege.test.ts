import { beforeAll, describe, expect, it } from '@jest/globals';
import { installAndHooks, isRbacRole, keyOf, podSpecOf, rulesOf, type Manifest } from './manifests.js';

const FORBIDDEN_VERBS = new Set(['*', 'escalate', 'bind', 'impersonate']);
let objects: Manifest[] = [];

beforeAll(async () => {
  objects = await installAndHooks();
});

/** The ServiceAccount a workload runs as (Knative Services, Deployments and Jobs in their pod
 *  spec, an ApiServerSource in its spec); undefined for objects that run nothing. */
function serviceAccountOf(m: Manifest): string | undefined {
  if (m.kind === 'ApiServerSource') return (m['spec'] as { serviceAccountName?: string }).serviceAccountName ?? 'default';
  const pod = podSpecOf(m);
  return pod === undefined ? undefined : ((pod['serviceAccountName'] as string | undefined) ?? 'default');
}

describe('component RBAC of the install', () => {
  it('has no wildcard, no escalate/bind/impersonate and no non-resource URL in any role', () => {
    const offending = objects.filter(isRbacRole).flatMap((role) =>
      rulesOf(role)
        .filter(
          (r) =>
            [...(r.apiGroups ?? []), ...(r.resources ?? [])].includes('*') ||
            r.verbs.some((v) => FORBIDDEN_VERBS.has(v)) ||
            (r.nonResourceURLs ?? []).length > 0,
        )
        .map((r) => `${keyOf(role)}: ${JSON.stringify(r)}`),
    );
    expect(offending).toEqual([]);
  });

  it('runs every workload under a ServiceAccount of its own that the install creates, never `default`', () => {
    const accounts = new Set(objects.filter((m) => m.kind === 'ServiceAccount').map((m) => m.metadata.name));
    const runs = objects.flatMap((m) => {
      const sa = serviceAccountOf(m);
      return sa === undefined ? [] : [[keyOf(m), sa] as const];
    });
    expect(runs.length).toBeGreaterThanOrEqual(7);
    expect(runs.filter(([, sa]) => !accounts.has(sa))).toEqual([]);
  });

  it('binds every ServiceAccount of the install to at least one role', () => {
    const bound = new Set(
      objects
        .filter((m) => m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding')
        .flatMap((m) => (m['subjects'] as Array<{ kind: string; name: string }>).filter((s) => s.kind === 'ServiceAccount').map((s) => s.name)),
    );
    const unbound = objects.filter((m) => m.kind === 'ServiceAccount' && !bound.has(m.metadata.name)).map(keyOf);
    expect(unbound).toEqual([]);
  });

  it('binds every component role to ServiceAccounts of the module namespace only', () => {
    const foreign = objects
      .filter((m) => m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding')
      .flatMap((m) => (m['subjects'] as Array<{ kind: string; name: string; namespace?: string }>).map((s) => [keyOf(m), s] as const))
      .filter(([, s]) => s.kind !== 'ServiceAccount' || s.namespace !== 'd8-virtualization')
      .map(([key, s]) => `${key}: ${JSON.stringify(s)}`);
    expect(foreign).toEqual([]);
  });
});
