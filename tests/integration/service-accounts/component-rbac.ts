/**
 * A component under exactly the RBAC the install gives it. Its file in knative/rbac/components/ is
 * parsed and applied as it is; a client (or a kubeconfig file, for code that reads KUBECONFIG)
 * impersonates its ServiceAccount, so the real component code runs with those rights and no others;
 * the apiserver's audit log then says which requests the component really made. From those requests
 * and the parsed roles: each rule removed in turn must make the apiserver deny one of them
 * (SubjectAccessReview of the exact request), and every grant of the roles must be used by one.
 */
import { randomBytes } from 'node:crypto';
import { expect, it } from '@jest/globals';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeClient, type KubeClientOptions } from '../../../shared/kube/index.js';
import { waitFor } from '../../../shared/testing/wait.js';

export { waitFor };
import { getTestEnv, impersonatingKubeConfig, kubectl } from '../../env/index.js';
import { KNATIVE_DIR, isRbacRole, keyOf, readManifests, rulesOf, type Manifest, type PolicyRule } from '../install/manifests.js';

const FIELD_MANAGER = 'component-rbac-test';

export interface ComponentRbac {
  readonly component: string;
  /** Every object of knative/rbac/components/<component>.yaml, as parsed. */
  readonly objects: readonly Manifest[];
  readonly serviceAccount: { readonly name: string; readonly namespace: string };
  /** `system:serviceaccount:<namespace>:<name>` and the groups the apiserver gives that account. */
  readonly user: string;
  readonly groups: readonly string[];
}

export async function loadComponentRbac(component: string): Promise<ComponentRbac> {
  const objects = await readManifests(`${KNATIVE_DIR}rbac/components/${component}.yaml`);
  const accounts = objects.filter((m) => m.kind === 'ServiceAccount');
  const sa = accounts[0]?.metadata;
  if (accounts.length !== 1 || sa?.namespace === undefined) throw new Error(`${component}.yaml must hold exactly one namespaced ServiceAccount`);
  return {
    component,
    objects,
    serviceAccount: { name: sa.name, namespace: sa.namespace },
    user: `system:serviceaccount:${sa.namespace}:${sa.name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'],
  };
}

export const rolesOf = (rbac: ComponentRbac): Manifest[] => rbac.objects.filter(isRbacRole);

/** kubectl apply --server-side of these objects (as JSON documents on stdin). */
export async function applyObjects(objects: readonly Manifest[]): Promise<void> {
  const stdin = objects.map((o) => JSON.stringify(o)).join('\n---\n');
  const res = await kubectl(['apply', '--server-side', '--force-conflicts', `--field-manager=${FIELD_MANAGER}`, '-f', '-'], { stdin });
  if (res.code !== 0) throw new Error(`applying ${objects.map(keyOf).join(', ')} failed: ${res.stderr}`);
}

/** The module namespace and the component's RBAC file, exactly as the install has them. */
export async function applyComponentRbac(rbac: ComponentRbac): Promise<void> {
  await applyObjects(await readManifests(`${KNATIVE_DIR}namespace.yaml`));
  await applyObjects(rbac.objects);
}

/** kubectl apply (server-side, as admin) of test objects in YAML; throws with kubectl's stderr. */
export async function applyYaml(yaml: string, fieldManager = 'service-account-test'): Promise<void> {
  const res = await kubectl(['apply', '--server-side', `--field-manager=${fieldManager}`, '-f', '-'], { stdin: yaml });
  if (res.code !== 0) throw new Error(res.stderr);
}

/** A client that acts as the component's ServiceAccount. */
export function serviceAccountClient(rbac: ComponentRbac, options?: KubeClientOptions): KubeClient {
  return new KubeClient(impersonatingKubeConfig(rbac.user), options);
}

/** A kubeconfig file (`as: <ServiceAccount>`) for component code that is configured with KUBECONFIG. */
export async function serviceAccountKubeconfig(rbac: ComponentRbac): Promise<string> {
  const dir = join(getTestEnv().workDir, 'service-accounts');
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${rbac.serviceAccount.name}-${randomBytes(3).toString('hex')}.kubeconfig`);
  await writeFile(path, impersonatingKubeConfig(rbac.user).exportConfig());
  return path;
}

/** Who the apiserver thinks the client is (SelfSubjectReview, allowed to every authenticated user). */
export async function whoAmI(kube: KubeClient): Promise<{ username: string; groups: string[] }> {
  const review = (await kube.rest.request({
    method: 'POST',
    path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    what: 'review who I am',
  })) as { status?: { userInfo?: { username?: string; groups?: string[] } } };
  return { username: review.status?.userInfo?.username ?? '', groups: review.status?.userInfo?.groups ?? [] };
}

/** One request as the authorizer sees it. */
export type ApiRequest = ResourceRequest | NonResourceRequest;

export interface ResourceRequest {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string | undefined;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
}

export interface NonResourceRequest {
  readonly verb: string;
  readonly path: string;
}

export const isResourceRequest = (r: ApiRequest): r is ResourceRequest => 'resource' in r;

export function describeRequest(r: ApiRequest): string {
  if (!isResourceRequest(r)) return `${r.verb} ${r.path}`;
  const what = `${r.resource}${r.subresource ? `/${r.subresource}` : ''}${r.group ? `.${r.group}` : ''}`;
  return `${r.verb} ${what}${r.namespace ? ` in ${r.namespace}` : ''}${r.name ? ` named ${r.name}` : ''}`;
}

interface AuditEvent {
  stage: string;
  verb: string;
  requestURI: string;
  requestReceivedTimestamp: string;
  impersonatedUser?: { username?: string };
  objectRef?: { apiGroup?: string; resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
}

/** A request the component made, with the status codes the apiserver answered it with. */
export interface SeenRequest {
  readonly request: ApiRequest;
  readonly codes: readonly number[];
}

function requestOf(e: AuditEvent): ApiRequest {
  const o = e.objectRef;
  if (o?.resource === undefined) return { verb: e.verb, path: e.requestURI.split('?')[0] ?? '' };
  return { verb: e.verb, group: o.apiGroup ?? '', resource: o.resource, subresource: o.subresource, namespace: o.namespace, name: o.name };
}

async function auditEventsOf(user: string, since: number): Promise<AuditEvent[]> {
  const text = await readFile(getTestEnv().auditLogPath, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.includes(user))
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((e) => e.impersonatedUser?.username === user && e.stage !== 'RequestReceived' && Date.parse(e.requestReceivedTimestamp) >= since);
}

/**
 * The requests `kube` (impersonating rbac's ServiceAccount) made since `since` (ms epoch), from the
 * apiserver's audit log, each once. A marker request is sent last and waited for in the log, so that
 * everything answered before it is there too; the marker and SelfSubjectReviews are left out.
 * Watches count from their ResponseStarted event, so an open watch is included.
 */
export async function requestsMadeBy(kube: KubeClient, rbac: ComponentRbac, since: number): Promise<SeenRequest[]> {
  const marker = `rbac-audit-marker-${randomBytes(4).toString('hex')}`;
  await kube.rest
    .request({ method: 'GET', path: `/api/v1/namespaces/${rbac.serviceAccount.namespace}/configmaps/${marker}`, what: 'audit marker' })
    .catch(() => undefined);
  const events = await waitFor(`the audit event of ${marker}`, async () => {
    const found = await auditEventsOf(rbac.user, since);
    return found.some((e) => e.objectRef?.name === marker) ? found : undefined;
  });
  const seen = new Map<string, { request: ApiRequest; codes: Set<number> }>();
  for (const e of events) {
    if (e.objectRef?.name === marker || e.objectRef?.resource === 'selfsubjectreviews') continue;
    const request = requestOf(e);
    const key = JSON.stringify(request);
    const entry = seen.get(key) ?? { request, codes: new Set<number>() };
    if (e.responseStatus?.code !== undefined) entry.codes.add(e.responseStatus.code);
    seen.set(key, entry);
  }
  return [...seen.values()].map(({ request, codes }) => ({ request, codes: [...codes].sort() }));
}

/** Every informer lists, then watches: whether the log shows a watch for every list. */
export function everyListWatched(seen: readonly SeenRequest[]): boolean {
  const resources = (verb: string): string[] =>
    seen
      .map((s) => s.request)
      .filter((r) => r.verb === verb && isResourceRequest(r))
      .map((r) => JSON.stringify({ ...r, verb: '' }));
  const watched = new Set(resources('watch'));
  return resources('list').every((r) => watched.has(r));
}

/** The first test of a component's file: its client acts as the install's ServiceAccount `name`, with that account's groups. */
export function itActsAsItsServiceAccount(name: string, subject: () => { readonly kube: KubeClient; readonly rbac: ComponentRbac }): void {
  it(`acts as the ${name} ServiceAccount`, async () => {
    const { kube, rbac } = subject();
    const me = await whoAmI(kube);
    expect(me.username).toBe(`system:serviceaccount:d8-virtualization:${name}`);
    expect(me.groups).toEqual(expect.arrayContaining([...rbac.groups]));
  });
}

/** Would the apiserver allow the ServiceAccount this request? (SubjectAccessReview, as admin.) */
export async function isAllowed(admin: KubeClient, rbac: ComponentRbac, r: ApiRequest): Promise<boolean> {
  const attributes = isResourceRequest(r)
    ? { resourceAttributes: { verb: r.verb, group: r.group, resource: r.resource, subresource: r.subresource, namespace: r.namespace, name: r.name } }
    : { nonResourceAttributes: { verb: r.verb, path: r.path } };
  const review = (await admin.rest.request({
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: rbac.user, groups: rbac.groups, ...attributes } },
    what: `review ${describeRequest(r)} for ${rbac.user}`,
  })) as { status?: { allowed?: boolean } };
  return review.status?.allowed === true;
}

/** The requests the apiserver denies the ServiceAccount now. */
export async function deniedRequests(admin: KubeClient, rbac: ComponentRbac, requests: readonly ApiRequest[]): Promise<ApiRequest[]> {
  const verdicts = await Promise.all(requests.map((r) => isAllowed(admin, rbac, r)));
  return requests.filter((_, i) => verdicts[i] !== true);
}

export function describeRule(rule: PolicyRule): string {
  const parts = [`verbs ${rule.verbs.join(',')}`];
  if (rule.apiGroups) parts.push(`groups ${rule.apiGroups.map((g) => g || '""').join(',')}`);
  if (rule.resources) parts.push(`resources ${rule.resources.join(',')}`);
  if (rule.resourceNames) parts.push(`names ${rule.resourceNames.join(',')}`);
  if (rule.nonResourceURLs) parts.push(`urls ${rule.nonResourceURLs.join(',')}`);
  return parts.join(' ');
}

/** The component's roles with one rule left out: one variant per rule of every Role/ClusterRole. */
export function rulesRemovedOneByOne(rbac: ComponentRbac): Array<{ readonly label: string; readonly role: Manifest }> {
  return rolesOf(rbac).flatMap((role) =>
    rulesOf(role).map((rule, index) => ({
      label: `${keyOf(role)} without rule ${index} (${describeRule(rule)})`,
      role: { ...role, rules: rulesOf(role).filter((_, i) => i !== index) },
    })),
  );
}

/** Apply the full roles again and wait until the apiserver allows every request. */
async function restoreRoles(admin: KubeClient, rbac: ComponentRbac, requests: readonly ApiRequest[]): Promise<void> {
  await applyObjects(rolesOf(rbac));
  let denied: ApiRequest[] = [];
  await waitFor(
    'the full roles to allow every request of the component',
    async () => (denied = await deniedRequests(admin, rbac, requests)).length === 0,
  ).catch((err: unknown) => {
    throw new Error(`with its full roles, ${rbac.user} is still denied: ${denied.map(describeRequest).join('; ')}`, { cause: err });
  });
}

/**
 * Each rule removed in turn (the role re-applied without it), which of `requests` the apiserver then
 * denies; the full roles are applied and seen in effect before every variant and at the end. Each
 * variant also carries a canary rule of its own (get one ConfigMap name nothing uses): once the
 * canary is allowed, the authorizer has that version of the role, so the verdicts read then are the
 * variant's, with no waiting on time. A rule nothing depends on shows up with no denied request.
 */
export async function deniedWithoutEachRule(
  admin: KubeClient,
  rbac: ComponentRbac,
  requests: readonly ApiRequest[],
): Promise<Array<{ readonly variant: string; readonly denied: string[] }>> {
  const results: Array<{ variant: string; denied: string[] }> = [];
  try {
    for (const [n, { label, role }] of rulesRemovedOneByOne(rbac).entries()) {
      await restoreRoles(admin, rbac, requests);
      const canaryName = `rbac-canary-${randomBytes(3).toString('hex')}-${n}`;
      const canary: PolicyRule = { apiGroups: [''], resources: ['configmaps'], resourceNames: [canaryName], verbs: ['get'] };
      await applyObjects([{ ...role, rules: [...rulesOf(role), canary] }]);
      const namespace = role.metadata.namespace ?? rbac.serviceAccount.namespace;
      await waitFor(`${label}: the variant in effect`, () =>
        isAllowed(admin, rbac, { verb: 'get', group: '', resource: 'configmaps', namespace, name: canaryName }),
      );
      const denied = await deniedRequests(admin, rbac, requests);
      results.push({ variant: label, denied: denied.map(describeRequest) });
    }
  } finally {
    await restoreRoles(admin, rbac, requests);
  }
  return results;
}

/** One thing a role grants: a verb on a resource (optionally only some names) or on a URL path. */
interface Grant {
  readonly label: string;
  readonly usedBy: (r: ApiRequest) => boolean;
}

function grantsOf(rule: PolicyRule): Grant[] {
  const names = rule.resourceNames ?? [];
  const onResources = (rule.apiGroups ?? []).flatMap((group) =>
    (rule.resources ?? []).flatMap((resource) =>
      rule.verbs.map((verb) => ({
        label: `${verb} ${resource}${group ? `.${group}` : ''}${names.length ? ` named ${names.join(',')}` : ''}`,
        usedBy: (r: ApiRequest): boolean =>
          isResourceRequest(r) &&
          r.verb === verb &&
          r.group === group &&
          (r.subresource ? `${r.resource}/${r.subresource}` : r.resource) === resource &&
          (names.length === 0 || (r.name !== undefined && names.includes(r.name))),
      })),
    ),
  );
  const onUrls = (rule.nonResourceURLs ?? []).flatMap((url) =>
    rule.verbs.map((verb) => ({
      label: `${verb} ${url}`,
      usedBy: (r: ApiRequest): boolean =>
        !isResourceRequest(r) && r.verb === verb && (url.endsWith('*') ? r.path.startsWith(url.slice(0, -1)) : r.path === url),
    })),
  );
  return [...onResources, ...onUrls];
}

/** What the component's roles grant that none of `requests` uses, per role. */
export function unusedGrants(rbac: ComponentRbac, requests: readonly ApiRequest[]): string[] {
  return rolesOf(rbac).flatMap((role) =>
    rulesOf(role)
      .flatMap(grantsOf)
      .filter((g) => !requests.some(g.usedBy))
      .map((g) => `${keyOf(role)}: ${g.label}`),
  );
}

/** What the least-privilege checks look at, read when they run (after the file's earlier tests saw the requests). */
export interface LeastPrivilegeSubject {
  readonly admin: KubeClient;
  readonly rbac: ComponentRbac;
  /** The requests the component was seen making. */
  readonly requests: readonly ApiRequest[];
}

/**
 * The two checks every component's test ends with: each rule of its role is needed (removing any one
 * makes the apiserver deny one of the requests seen), and the role grants nothing those requests do
 * not use. `who` says what made the requests, in the second test's name ("the informers do").
 */
export function itNeedsEveryRuleAndNothingMore(who: string, subject: () => LeastPrivilegeSubject): void {
  it('is denied a request it makes whenever any one rule of its role is removed', async () => {
    const { admin, rbac, requests } = subject();
    expect(requests.length).toBeGreaterThan(0);
    const results = await deniedWithoutEachRule(admin, rbac, requests);
    expect(results).toHaveLength(rulesRemovedOneByOne(rbac).length);
    expect(results.filter((r) => r.denied.length === 0).map((r) => r.variant)).toEqual([]);
  }, 120_000);

  it(`is granted nothing by its role that ${who} not request`, () => {
    const { rbac, requests } = subject();
    expect(requests.length).toBeGreaterThan(0);
    expect(unusedGrants(rbac, requests)).toEqual([]);
  });
}
