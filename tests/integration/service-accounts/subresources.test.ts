/**
 * The subresources aggregated API under the RBAC the install gives it
 * (knative/rbac/components/subresources.yaml). Its unit (functions/subresources) does not exist yet,
 * so only what every aggregated apiserver built on k8s.io/apiserver does is run here: delegated
 * authentication and authorization (TokenReview, SubjectAccessReview, through the binding to
 * `system:auth-delegator`) and reading the front-proxy CA from the ConfigMap
 * kube-system/extension-apiserver-authentication (get, and list+watch narrowed to that name, through
 * the RoleBinding to `extension-apiserver-authentication-reader`), impersonating its ServiceAccount.
 * Each of those two bindings removed in turn denies some of these requests.
 *
 * Not tested until the unit exists: the rules of its own ClusterRole (VM lookups, console/VNC session
 * Leases, Events), because no code makes those requests yet, and a review of the rules' own contents
 * would only repeat the file.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Informer, KubeClient, kubeObjectSchema, type KubeObject } from '../../../shared/kube/index.js';
import { rootLogger } from '../../../shared/log/index.js';
import { kubectl, newKubeConfig } from '../../env/index.js';
import { keyOf } from '../install/manifests.js';
import {
  applyObjects,
  applyComponentRbac,
  deniedRequests,
  describeRequest,
  loadComponentRbac,
  requestsMadeBy,
  rolesOf,
  serviceAccountClient,
  whoAmI,
  type ApiRequest,
  type ComponentRbac,
} from './component-rbac.js';
import { waitFor } from '../../../shared/testing/wait.js';

const AUTH_CONFIGMAP = 'extension-apiserver-authentication';
const CONFIGMAPS = { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true };
const admin = new KubeClient(newKubeConfig());
let rbac: ComponentRbac;
let kube: KubeClient;
let requests: ApiRequest[] = [];

beforeAll(async () => {
  rbac = await loadComponentRbac('subresources');
  await applyComponentRbac(rbac);
  kube = serviceAccountClient(rbac, { requestTimeoutMs: 10_000 });
});

afterAll(() => {
  kube.close();
  admin.close();
});

/** The bindings of the file to roles the apiserver ships (not defined in the file). */
function builtInBindings(): ComponentRbac['objects'] {
  const own = new Set(rolesOf(rbac).map((r) => r.metadata.name));
  return rbac.objects.filter((m) => (m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding') && !own.has((m['roleRef'] as { name: string }).name));
}

async function review(path: string, spec: object): Promise<{ status?: Record<string, unknown> }> {
  const kind = path.includes('tokenreviews') ? 'TokenReview' : 'SubjectAccessReview';
  const group = path.includes('tokenreviews') ? 'authentication.k8s.io/v1' : 'authorization.k8s.io/v1';
  return (await kube.rest.request({ method: 'POST', path, body: { apiVersion: group, kind, spec }, what: `create ${kind}` })) as { status?: Record<string, unknown> };
}

describe('the subresources API ServiceAccount (its unit does not exist yet)', () => {
  it('acts as the subresources ServiceAccount', async () => {
    expect((await whoAmI(kube)).username).toBe('system:serviceaccount:d8-virtualization:subresources');
  });

  it('delegates authentication and authorization and reads the front-proxy CA, refused nothing', async () => {
    const since = Date.now();
    const tokens = await review('/apis/authentication.k8s.io/v1/tokenreviews', { token: 'not-a-token' });
    expect(tokens.status?.['authenticated']).not.toBe(true);
    const access = await review('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      user: 'someone',
      resourceAttributes: { group: 'subresources.virtualization.deckhouse.io', resource: 'virtualmachines', subresource: 'console', verb: 'get', namespace: 'x', name: 'vm' },
    });
    expect(access.status?.['allowed']).toBe(false);

    const cm = await kube.resource(CONFIGMAPS, kubeObjectSchema, 'unused').get({ namespace: 'kube-system', name: AUTH_CONFIGMAP });
    expect(cm.metadata.name).toBe(AUTH_CONFIGMAP);
    const informer = new Informer<KubeObject>({
      client: kube.resource(CONFIGMAPS, kubeObjectSchema, 'unused'),
      namespace: 'kube-system',
      fieldSelector: `metadata.name=${AUTH_CONFIGMAP}`,
      logger: rootLogger,
    }).start();
    try {
      await informer.synced;
      await waitFor('the watch to be accepted', () => Promise.resolve(informer.stats.watches > 0 ? true : undefined));
      expect([...informer.store.keys()]).toEqual([`kube-system/${AUTH_CONFIGMAP}`]);
    } finally {
      await informer.stop();
    }

    const seen = await requestsMadeBy(kube, rbac, since);
    requests = seen.map((s) => s.request);
    expect(seen.filter((s) => s.codes.includes(403)).map((s) => describeRequest(s.request))).toEqual([]);
    expect(requests.map(describeRequest).sort()).toEqual([
      'create subjectaccessreviews.authorization.k8s.io',
      'create tokenreviews.authentication.k8s.io',
      `get configmaps in kube-system named ${AUTH_CONFIGMAP}`,
      `list configmaps in kube-system named ${AUTH_CONFIGMAP}`,
      `watch configmaps in kube-system named ${AUTH_CONFIGMAP}`,
    ]);
  });

  it('is denied some of those requests whenever one of its two bindings to built-in roles is removed', async () => {
    expect(requests.length).toBeGreaterThan(0);
    const bindings = builtInBindings();
    expect(bindings.map(keyOf).sort()).toEqual([
      'ClusterRoleBinding/d8:virtualization:subresources:auth-delegator',
      'RoleBinding/kube-system/d8:virtualization:subresources:auth-reader',
    ]);
    const results: Array<[string, string[]]> = [];
    try {
      for (const binding of bindings) {
        const del = await kubectl(['delete', binding.kind.toLowerCase(), binding.metadata.name, ...(binding.metadata.namespace ? ['-n', binding.metadata.namespace] : [])]);
        if (del.code !== 0) throw new Error(del.stderr);
        const denied = await waitFor(`a request denied without ${keyOf(binding)}`, async () => {
          const now = await deniedRequests(admin, rbac, requests);
          return now.length > 0 ? now : undefined;
        });
        results.push([keyOf(binding), denied.map(describeRequest).sort()]);
        await applyObjects([binding]);
        await waitFor('every request allowed again', async () => ((await deniedRequests(admin, rbac, requests)).length === 0 ? true : undefined));
      }
    } finally {
      await applyObjects(bindings);
    }
    expect(results).toEqual([
      ['ClusterRoleBinding/d8:virtualization:subresources:auth-delegator', ['create subjectaccessreviews.authorization.k8s.io', 'create tokenreviews.authentication.k8s.io']],
      ['RoleBinding/kube-system/d8:virtualization:subresources:auth-reader', [
        `get configmaps in kube-system named ${AUTH_CONFIGMAP}`,
        `list configmaps in kube-system named ${AUTH_CONFIGMAP}`,
        `watch configmaps in kube-system named ${AUTH_CONFIGMAP}`,
      ]],
    ]);
  });

  it.todo('is denied a request it makes whenever any one rule of its ClusterRole is removed (needs functions/subresources)');
  it.todo('is granted nothing by its ClusterRole that the unit does not request (needs functions/subresources)');
});
