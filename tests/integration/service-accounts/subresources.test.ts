/**
 * The subresources aggregated API under the RBAC the install gives it
 * (knative/rbac/components/subresources.yaml). First what every aggregated apiserver built on
 * k8s.io/apiserver does: delegated authentication and authorization (TokenReview,
 * SubjectAccessReview, through the binding to `system:auth-delegator`; the function host uses them for
 * /metrics) and reading the front-proxy CA from the ConfigMap
 * kube-system/extension-apiserver-authentication (get, and list+watch narrowed to that name, through
 * the RoleBinding to `extension-apiserver-authentication-reader`), impersonating its ServiceAccount.
 * Each of those two bindings removed in turn denies some of these requests. Then the unit itself
 * (functions/subresources), run as that ServiceAccount and called as the aggregator calls it: the
 * requests it makes (the ConfigMap watch, VM lookups, a scaleDownWith) are all allowed, each rule of its ClusterRole is
 * needed by one of them, and the role grants nothing else.
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
  type ApiRequest,
  type ComponentRbac,
  itActsAsItsServiceAccount,
} from './component-rbac.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { serve } from '../../../shared/runtime/index.js';
import { subresources } from '../../../functions/subresources/index.js';
import { VirtApiStandIn } from '../../../platform/simulators/kubevirt-simulator/virt-api/virt-api-stand-in.js';
import WebSocket from 'ws';
import { createCA, getTestEnv, issueCert } from '../../env/index.js';
import { AUDITED_LEASES_NAMESPACE } from '../../env/control-plane.js';
import { itNeedsEveryRuleAndNothingMore, serviceAccountKubeconfig } from './component-rbac.js';

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
  return (await kube.rest.request({ method: 'POST', path, body: { apiVersion: group, kind, spec }, what: `create ${kind}` })) as {
    status?: Record<string, unknown>;
  };
}

describe('the subresources API ServiceAccount', () => {
  itActsAsItsServiceAccount('subresources', () => ({ kube, rbac }));

  it('delegates authentication and authorization and reads the front-proxy CA, refused nothing', async () => {
    const since = Date.now();
    const tokens = await review('/apis/authentication.k8s.io/v1/tokenreviews', { token: 'not-a-token' });
    expect(tokens.status?.['authenticated']).not.toBe(true);
    const access = await review('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      user: 'someone',
      resourceAttributes: {
        group: 'subresources.virtualization.deckhouse.io',
        resource: 'virtualmachines',
        subresource: 'console',
        verb: 'get',
        namespace: 'x',
        name: 'vm',
      },
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
        const del = await kubectl([
          'delete',
          binding.kind.toLowerCase(),
          binding.metadata.name,
          ...(binding.metadata.namespace ? ['-n', binding.metadata.namespace] : []),
        ]);
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
      [
        'ClusterRoleBinding/d8:virtualization:subresources:auth-delegator',
        ['create subjectaccessreviews.authorization.k8s.io', 'create tokenreviews.authentication.k8s.io'],
      ],
      [
        'RoleBinding/kube-system/d8:virtualization:subresources:auth-reader',
        [
          `get configmaps in kube-system named ${AUTH_CONFIGMAP}`,
          `list configmaps in kube-system named ${AUTH_CONFIGMAP}`,
          `watch configmaps in kube-system named ${AUTH_CONFIGMAP}`,
        ],
      ],
    ]);
  });
});

describe('the subresources function as its ServiceAccount', () => {
  let unitRequests: ApiRequest[] = [];

  it('serves the aggregator with every request it makes allowed (ConfigMap watch, VM lookups, console session Leases and Events, scaleDownWith)', async () => {
    const env = getTestEnv();
    const dir = join(env.workDir, 'service-accounts', 'subresources-unit');
    const ca = await createCA(dir, 'subresources');
    const serving = await issueCert(ca, dir, 'serving', { commonName: 'subresources-api', usage: 'server', ipAddresses: ['127.0.0.1'] });
    const pki = join(env.workDir, 'pki');
    const [caPem, frontCert, frontKey] = await Promise.all([
      readFile(ca.certPath, 'utf8'),
      readFile(join(pki, 'front-proxy-client.crt'), 'utf8'),
      readFile(join(pki, 'front-proxy-client.key'), 'utf8'),
    ]);
    // The audit log records Leases only in this namespace (tests/env/control-plane.ts).
    const ns = AUDITED_LEASES_NAMESPACE;
    await kubectl(['create', 'namespace', ns]);
    const vm = await kubectl(['apply', '-f', '-'], {
      stdin: `apiVersion: virtualization.deckhouse.io/v1alpha2\nkind: VirtualMachine\nmetadata: {name: vm1, namespace: ${ns}}\nspec: {virtualMachineClassName: generic, cpu: {cores: 1}, memory: {size: 1Gi}, blockDeviceRefs: [{kind: VirtualDisk, name: root}]}\n`,
    });
    if (vm.code !== 0) throw new Error(vm.stderr);
    const running = await kubectl([
      'patch',
      'virtualmachine.virtualization.deckhouse.io',
      'vm1',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Running"}}',
    ]);
    if (running.code !== 0) throw new Error(running.stderr);
    const vmUid = (await kubectl(['get', 'virtualmachine.virtualization.deckhouse.io', 'vm1', '-n', ns, '-o', 'jsonpath={.metadata.uid}'])).stdout;
    // A pool with one member as the pool controller makes it (the pool as controller, its uid label), for scaleDownWith.
    const poolApplied = await kubectl(['apply', '-f', '-'], {
      stdin: `apiVersion: virtualization.deckhouse.io/v1alpha2\nkind: VirtualMachinePool\nmetadata: {name: web, namespace: ${ns}}\nspec: {replicas: 1, scaleDownPolicy: Explicit, virtualDiskTemplates: [{name: root, spec: {persistentVolumeClaim: {size: 1Gi}}}], virtualMachineTemplate: {spec: {virtualMachineClassName: generic, cpu: {cores: 1}, memory: {size: 1Gi}, liveMigrationPolicy: PreferSafe, blockDeviceRefs: [{kind: VirtualDisk, name: root}]}}}\n`,
    });
    if (poolApplied.code !== 0) throw new Error(poolApplied.stderr);
    const poolUid = (await kubectl(['get', 'virtualmachinepools.virtualization.deckhouse.io', 'web', '-n', ns, '-o', 'jsonpath={.metadata.uid}'])).stdout;
    const member = await kubectl(['apply', '-f', '-'], {
      stdin: `apiVersion: virtualization.deckhouse.io/v1alpha2\nkind: VirtualMachine\nmetadata: {name: web-aaaaa, namespace: ${ns}, labels: {vmpool.virtualization.deckhouse.io/pool-uid: ${poolUid}}, ownerReferences: [{apiVersion: virtualization.deckhouse.io/v1alpha2, kind: VirtualMachinePool, name: web, uid: ${poolUid}, controller: true}]}\nspec: {virtualMachineClassName: generic, cpu: {cores: 1}, memory: {size: 1Gi}, blockDeviceRefs: [{kind: VirtualDisk, name: web-aaaaa-root}]}\n`,
    });
    if (member.code !== 0) throw new Error(member.stderr);
    // virt-api over plain HTTP: this test is about the apiserver requests the function makes, not virt-api's TLS.
    const virtApi = new VirtApiStandIn({ log: rootLogger });
    await virtApi.start();

    const since = Date.now();
    const fn = await serve(subresources, {
      env: {
        PORT: '0',
        HOST: '127.0.0.1',
        METRICS_AUTH: 'none',
        TLS_CERT_FILE: serving.certPath,
        TLS_KEY_FILE: serving.keyPath,
        KUBECONFIG: await serviceAccountKubeconfig(rbac),
        VIRT_API_URL: virtApi.url,
      },
    });
    const call = (method: string, path: string, payload?: object): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const req = httpsRequest(
          {
            host: '127.0.0.1',
            port: fn.port,
            path,
            method,
            ca: caPem,
            cert: frontCert,
            key: frontKey,
            headers: { 'X-Remote-User': 'admin', ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }) },
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (c: string) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end(payload === undefined ? undefined : JSON.stringify(payload));
      });
    const get = (path: string): Promise<{ status: number; body: string }> => call('GET', path);
    try {
      const base = `/apis/subresources.virtualization.deckhouse.io/v1alpha2/namespaces/${ns}/virtualmachines`;
      // Not ready (401/503) until the ConfigMap watch has delivered the front-proxy CA.
      const found = await waitFor('the VM through the function', async () => {
        const res = await get(`${base}/vm1`);
        return res.status === 200 ? res : undefined;
      });
      expect(JSON.parse(found.body)).toMatchObject({ kind: 'VirtualMachine', metadata: { name: 'vm1', namespace: ns } });
      expect((await get(`${base}/ghost/scale`)).status).toBe(404);
      // Three consoles, each taking over the one before (the second take-over patches the Event's series), then all closed.
      const consoles: WebSocket[] = [];
      const lease = `d8v-vm-console-vm1-${vmUid}`;
      let sessionId = '';
      for (let i = 0; i < 3; i++) {
        const ws = new WebSocket(`wss://127.0.0.1:${fn.port}${base}/vm1/console`, ['plain.virtualization.deckhouse.io'], {
          ca: caPem,
          cert: frontCert,
          key: frontKey,
          headers: { 'X-Remote-User': 'admin' },
        });
        await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
        consoles.push(ws);
        const id = await waitFor(`session ${i + 1} in the Lease`, async () => {
          const res = await kubectl(['get', 'lease', lease, '-n', ns, '-o', `jsonpath={.metadata.annotations.virtualization\\.deckhouse\\.io/session-id}`]);
          return res.code === 0 && res.stdout !== '' && res.stdout !== sessionId ? res.stdout : undefined;
        });
        sessionId = id;
      }
      await waitFor('the series of the take-over Event', async () => {
        const res = await kubectl(['get', 'events.events.k8s.io', '-n', ns, '-o', 'jsonpath={.items[*].series.count}']);
        return res.stdout === '2' ? true : undefined;
      });
      for (const ws of consoles) ws.close();
      // scaleDownWith: reads the pool and the target, deletes the member, lowers spec.replicas.
      const removed = await call('POST', `/apis/subresources.virtualization.deckhouse.io/v1alpha2/namespaces/${ns}/virtualmachinepools/web/scaledownwith`, {
        targets: ['web-aaaaa'],
      });
      expect(removed).toMatchObject({ status: 200 });
      expect((await kubectl(['get', 'virtualmachinepools.virtualization.deckhouse.io', 'web', '-n', ns, '-o', 'jsonpath={.spec.replicas}'])).stdout).toBe('0');
      await waitFor('the Lease deleted', async () =>
        (await kubectl(['get', 'lease', '-n', ns, '-l', 'virtualization.deckhouse.io/session', '-o', 'name'])).stdout === '' ? true : undefined,
      );
    } finally {
      await fn.close();
      await virtApi.stop();
    }
    const seen = await requestsMadeBy(kube, rbac, since);
    unitRequests = seen.map((s) => s.request);
    expect(seen.filter((s) => s.codes.includes(403)).map((s) => describeRequest(s.request))).toEqual([]);
    // Event names are generated: shown as <event>.
    const described = unitRequests.map((r) => describeRequest(r).replace(/^(\w+ events\.events\.k8s\.io in \S+ named) \S+$/, '$1 <event>'));
    expect([...new Set(described)].sort()).toEqual([
      `create events.events.k8s.io in ${ns} named <event>`,
      `create leases.coordination.k8s.io in ${ns} named d8v-vm-console-vm1-${vmUid}`,
      `delete leases.coordination.k8s.io in ${ns} named d8v-vm-console-vm1-${vmUid}`,
      `delete virtualmachines.virtualization.deckhouse.io in ${ns} named web-aaaaa`,
      `get leases.coordination.k8s.io in ${ns} named d8v-vm-console-vm1-${vmUid}`,
      `get virtualmachinepools.virtualization.deckhouse.io in ${ns} named web`,
      `get virtualmachines.virtualization.deckhouse.io in ${ns} named ghost`,
      `get virtualmachines.virtualization.deckhouse.io in ${ns} named vm1`,
      `get virtualmachines.virtualization.deckhouse.io in ${ns} named web-aaaaa`,
      `list configmaps in kube-system named ${AUTH_CONFIGMAP}`,
      `patch events.events.k8s.io in ${ns} named <event>`,
      `patch virtualmachinepools.virtualization.deckhouse.io in ${ns} named web`,
      `update leases.coordination.k8s.io in ${ns} named d8v-vm-console-vm1-${vmUid}`,
      `watch configmaps in kube-system named ${AUTH_CONFIGMAP}`,
    ]);
  });

  itNeedsEveryRuleAndNothingMore('the unit does', () => ({ admin, rbac, requests: unitRequests }));
});
