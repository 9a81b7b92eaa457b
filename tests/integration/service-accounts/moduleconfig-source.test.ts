/**
 * The identity of the Knative ApiServerSource `moduleconfigs` (knative/eventing/moduleconfig-source.yaml)
 * under exactly the RBAC the install gives it (knative/rbac/components/moduleconfig-source.yaml).
 * The source is Knative's code, not ours, so its requests are reproduced here from Knative Eventing:
 * - the receive adapter asks discovery whether the kind is namespaced (knative/eventing#2930) and,
 *   ModuleConfig being cluster-scoped, lists and then watches ModuleConfigs cluster-wide (a client-go
 *   reflector); done here with our informer, through a client impersonating the ServiceAccount;
 * - the controller, before it deploys the adapter, asks SubjectAccessReviews for `get`, `list` and
 *   `watch` of the resource in the source's namespace, for the bare user name (runAccessCheck in
 *   pkg/reconciler/apiserversource); without all three the source is NoSufficientPermission.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Informer, KubeClient, kubeObjectSchema, type KubeObject } from '../../../shared/kube/index.js';
import { rootLogger } from '../../../shared/log/index.js';
import { installDeckhouseCrds, kubectl, newKubeConfig } from '../../env/index.js';
import { readManifests, KNATIVE_DIR } from '../install/manifests.js';
import {
  applyComponentRbac,
  itNeedsEveryRuleAndNothingMore,
  describeRequest,
  loadComponentRbac,
  requestsMadeBy,
  serviceAccountClient,
  whoAmI,
  type ApiRequest,
  type ComponentRbac,
} from './component-rbac.js';
import { waitFor } from '../../../shared/testing/wait.js';

const MODULE_CONFIGS = { group: 'deckhouse.io', version: 'v1alpha1', plural: 'moduleconfigs', kind: 'ModuleConfig', namespaced: false };
const name = `mc-source-${randomBytes(3).toString('hex')}`;
const admin = new KubeClient(newKubeConfig());
let rbac: ComponentRbac;
let kube: KubeClient;
let requests: ApiRequest[] = [];

/** The controller's access check: the three reviews it makes, in the ApiServerSource's namespace. */
async function accessCheckAllows(source: { namespace: string; serviceAccountName: string }, verb: string): Promise<boolean> {
  const review = (await admin.rest.request({
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: `system:serviceaccount:${source.namespace}:${source.serviceAccountName}`,
        resourceAttributes: { namespace: source.namespace, verb, group: MODULE_CONFIGS.group, resource: MODULE_CONFIGS.plural },
      },
    },
    what: `access check ${verb} moduleconfigs`,
  })) as { status?: { allowed?: boolean } };
  return review.status?.allowed === true;
}

/** The ApiServerSource of the install: its namespace, ServiceAccount and the one resource it watches. */
async function theSource(): Promise<{ namespace: string; serviceAccountName: string; resources: Array<{ apiVersion: string; kind: string }> }> {
  const [source] = (await readManifests(`${KNATIVE_DIR}eventing/moduleconfig-source.yaml`)).filter((m) => m.kind === 'ApiServerSource');
  const spec = source?.['spec'] as { serviceAccountName: string; resources: Array<{ apiVersion: string; kind: string }> };
  return { namespace: source?.metadata.namespace ?? '', serviceAccountName: spec.serviceAccountName, resources: spec.resources };
}

beforeAll(async () => {
  rbac = await loadComponentRbac('moduleconfig-source');
  await Promise.all([applyComponentRbac(rbac), installDeckhouseCrds()]);
  kube = serviceAccountClient(rbac, { requestTimeoutMs: 10_000 });
});

afterAll(async () => {
  kube.close();
  admin.close();
  await kubectl(['delete', 'moduleconfigs.deckhouse.io', name, '--ignore-not-found']);
});

describe('the ModuleConfig ApiServerSource with only its ServiceAccount rights', () => {
  it('is the identity the ApiServerSource of the install runs as, and watches exactly ModuleConfigs', async () => {
    const source = await theSource();
    expect(`system:serviceaccount:${source.namespace}:${source.serviceAccountName}`).toBe(rbac.user);
    expect(source.resources).toEqual([{ apiVersion: 'deckhouse.io/v1alpha1', kind: 'ModuleConfig' }]);
    expect((await whoAmI(kube)).username).toBe(rbac.user);
  });

  it('passes the controller access check, and lists then watches ModuleConfigs as the adapter does', async () => {
    const since = Date.now();
    const source = await theSource();
    for (const verb of ['get', 'list', 'watch']) expect([verb, await accessCheckAllows(source, verb)]).toEqual([verb, true]);

    const discovery = (await kube.rest.request({ method: 'GET', path: '/apis/deckhouse.io/v1alpha1', what: 'discover deckhouse.io/v1alpha1' })) as {
      resources?: Array<{ name: string; namespaced: boolean }>;
    };
    expect(discovery.resources?.find((r) => r.name === 'moduleconfigs')?.namespaced).toBe(false);

    const added: string[] = [];
    const informer = new Informer<KubeObject>({ client: kube.resource(MODULE_CONFIGS, kubeObjectSchema, 'unused'), logger: rootLogger });
    informer.on('add', (mc) => void added.push(mc.metadata.name ?? ''));
    informer.start();
    try {
      await informer.synced;
      await waitFor('the watch to be accepted', () => Promise.resolve(informer.stats.watches > 0 ? true : undefined));
      const res = await kubectl(['apply', '--server-side', '--field-manager=mc-source-test', '-f', '-'], {
        stdin: `apiVersion: deckhouse.io/v1alpha1\nkind: ModuleConfig\nmetadata: {name: ${name}}\nspec: {enabled: false}\n`,
      });
      if (res.code !== 0) throw new Error(res.stderr);
      await waitFor(`the watch to deliver ${name}`, () => Promise.resolve(added.includes(name) ? true : undefined));
    } finally {
      await informer.stop();
    }

    const seen = await requestsMadeBy(kube, rbac, since);
    expect(seen.filter((s) => s.codes.includes(403)).map((s) => describeRequest(s.request))).toEqual([]);
    const checks = ['get', 'list', 'watch'].map((verb) => ({ verb, group: 'deckhouse.io', resource: 'moduleconfigs', namespace: source.namespace }));
    requests = [...seen.map((s) => s.request), ...checks];
    expect(requests.map(describeRequest)).toEqual(
      expect.arrayContaining(['list moduleconfigs.deckhouse.io', 'watch moduleconfigs.deckhouse.io', 'get /apis/deckhouse.io/v1alpha1']),
    );
  });

  itNeedsEveryRuleAndNothingMore('the adapter and the access check do', () => ({ admin, rbac, requests }));
});
