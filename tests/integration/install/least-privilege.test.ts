import { relative } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  KNATIVE_DIR,
  installAndHooks,
  isRbacRole,
  keyOf,
  podSpecOf,
  readManifests,
  rulesOf,
  yamlFilesUnder,
  type Manifest,
  type PolicyRule,
} from './manifests.js';

const FORBIDDEN_VERBS = new Set(['escalate', 'bind', 'impersonate']);
const WILDCARD_FIELDS = ['verbs', 'resources', 'apiGroups', 'resourceNames', 'nonResourceURLs'] as const;
let objects: Manifest[] = [];

/**
 * The wildcards the install needs, each with its reason. virt-operator creates the ClusterRoles of
 * virt-controller, virt-handler and virt-api, and the apiserver lets it create a role only with
 * permissions it holds (no escalate or bind in the install); upstream's virt-controller role grants `*`
 * on every resource and verb of each KubeVirt group (renamed here), and a list of names does not
 * cover `*`, so virt-operator must hold the same wildcard.
 */
const WILDCARD_EXCEPTIONS: ReadonlyArray<{ role: string; rule: PolicyRule; why: string }> = [
  {
    role: 'ClusterRole/d8:virtualization:kubevirt-operator',
    rule: {
      apiGroups: [
        'internal.virtualization.deckhouse.io',
        'clone.internal.virtualization.deckhouse.io',
        'export.internal.virtualization.deckhouse.io',
        'instancetype.internal.virtualization.deckhouse.io',
        'migrations.internal.virtualization.deckhouse.io',
        'pool.internal.virtualization.deckhouse.io',
        'snapshot.internal.virtualization.deckhouse.io',
      ],
      resources: ['*'],
      verbs: ['*'],
    },
    why: "virt-operator creates virt-controller's ClusterRole, which upstream grants `*` on KubeVirt's groups",
  },
];

const isNamedException = (role: string, rule: PolicyRule): boolean =>
  WILDCARD_EXCEPTIONS.some((e) => e.role === role && JSON.stringify(e.rule) === JSON.stringify(rule));

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

/** Each value of a rule with a `*` in it (a bare star, a subresource or URL-prefix star...), as `field: value`. */
function wildcardsOf(rule: PolicyRule): string[] {
  return WILDCARD_FIELDS.flatMap((field) => (rule[field] ?? []).filter((v) => v.includes('*')).map((v) => `${field}: ${v}`));
}

describe('component RBAC of the install', () => {
  it('has no escalate, bind or impersonate verb in any role', () => {
    const offending = objects.filter(isRbacRole).flatMap((role) =>
      rulesOf(role)
        .filter((r) => r.verbs.some((v) => FORBIDDEN_VERBS.has(v)))
        .map((r) => `${keyOf(role)}: ${JSON.stringify(r)}`),
    );
    expect(offending).toEqual([]);
  });

  it('has no wildcard in the verbs, resources, apiGroups, resourceNames or nonResourceURLs of any role in any YAML file under knative/', async () => {
    const files = await yamlFilesUnder(KNATIVE_DIR);
    const scanned = files.map((f) => relative(KNATIVE_DIR, f));
    expect(scanned).toEqual(expect.arrayContaining(['hooks/pre-delete/job.yaml', 'standalone/deckhouse-crds.yaml', 'rbac/components/admission.yaml']));
    const roles = (
      await Promise.all(files.map(async (f) => (await readManifests(f)).filter(isRbacRole).map((role) => [relative(KNATIVE_DIR, f), role] as const)))
    ).flat();
    expect(roles.length).toBeGreaterThan(0);
    const offending = roles.flatMap(([file, role]) =>
      rulesOf(role)
        .filter((rule) => !isNamedException(keyOf(role), rule))
        .flatMap(wildcardsOf)
        .map((w) => `${file} ${keyOf(role)}: ${w}`),
    );
    expect(offending).toEqual([]);
  });

  it("has the named wildcard exception exactly once, as named: virt-operator's `*` on KubeVirt's renamed groups", () => {
    const found = objects.filter(isRbacRole).flatMap((role) =>
      rulesOf(role)
        .filter((rule) => wildcardsOf(rule).length > 0)
        .map((rule) => [keyOf(role), rule] as const),
    );
    expect(found).toEqual(WILDCARD_EXCEPTIONS.map((e) => [e.role, e.rule]));
  });

  it('recognises a wildcard in each of those fields, and not an exact non-resource URL such as /metrics', () => {
    expect(wildcardsOf({ apiGroups: ['*'], resources: ['pods/*'], resourceNames: ['*'], verbs: ['*'] })).toEqual([
      'verbs: *',
      'resources: pods/*',
      'apiGroups: *',
      'resourceNames: *',
    ]);
    expect(wildcardsOf({ nonResourceURLs: ['/metrics*'], verbs: ['get'] })).toEqual(['nonResourceURLs: /metrics*']);
    expect(wildcardsOf({ nonResourceURLs: ['/metrics'], verbs: ['get'] })).toEqual([]);
  });

  it("grants a non-resource URL to one role only, the scrapers' role: get /metrics", () => {
    // Every unit's /metrics asks the apiserver whether the scraper may `get /metrics` (shared/authz,
    // as kube-rbac-proxy does), which only a nonResourceURLs rule can grant; nothing else needs one.
    const urls = objects.filter(isRbacRole).flatMap((role) =>
      rulesOf(role)
        .filter((r) => (r.nonResourceURLs ?? []).length > 0)
        .map((r) => `${keyOf(role)}: ${r.verbs.join(',')} ${(r.nonResourceURLs ?? []).join(',')}${r.resources ? ' +resources' : ''}`),
    );
    expect(urls).toEqual(['ClusterRole/d8:virtualization:metrics-reader: get /metrics']);
  });

  it('lets every ServiceAccount that serves /metrics review tokens and access (system:auth-delegator)', () => {
    // The guard of /metrics (shared/authz) creates TokenReviews and SubjectAccessReviews as the unit.
    const servers = objects.filter((m) => m.kind !== 'Job' && podSpecOf(m) !== undefined).map((m) => serviceAccountOf(m));
    const delegated = new Set(
      objects
        .filter((m) => m.kind === 'ClusterRoleBinding' && (m['roleRef'] as { name: string }).name === 'system:auth-delegator')
        .flatMap((m) => (m['subjects'] as Array<{ kind: string; name: string }>).filter((s) => s.kind === 'ServiceAccount').map((s) => s.name)),
    );
    expect(servers.length).toBeGreaterThanOrEqual(5);
    expect(servers.filter((sa) => sa === undefined || !delegated.has(sa))).toEqual([]);
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

  it('binds every component role to ServiceAccounts of the module namespace only; the one outside sender is bound to create auditevents alone', () => {
    // Deckhouse's log shipper (Vector) sends audit events with its own token (shared/authz/senders.ts).
    const sender = objects.find((m) => m.kind === 'ClusterRole' && m.metadata.name === 'd8:virtualization:audit-sender');
    expect(sender === undefined ? undefined : rulesOf(sender)).toEqual([
      { apiGroups: ['virtualization.deckhouse.io'], resources: ['auditevents'], verbs: ['create'] },
    ]);
    const foreign = objects
      .filter((m) => (m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding') && m.metadata.name !== 'd8:virtualization:audit-sender')
      .flatMap((m) => (m['subjects'] as Array<{ kind: string; name: string; namespace?: string }>).map((s) => [keyOf(m), s] as const))
      .filter(([, s]) => s.kind !== 'ServiceAccount' || s.namespace !== 'd8-virtualization')
      .map(([key, s]) => `${key}: ${JSON.stringify(s)}`);
    expect(foreign).toEqual([]);
  });
});
