/**
 * The subresources API through the real aggregator of the test kube-apiserver: discovery and OpenAPI
 * with kubectl, the front-proxy authentication (401 for anything else), the calls proxied to the
 * virt-api stand-in, RBAC decided by the apiserver, and streams. One file, because the APIService is
 * cluster-wide and only one may exist.
 */
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ServerHandle } from '../../../shared/runtime/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import type { VirtApiStandIn } from '../../../daemons/kubevirt-simulator/virt-api/virt-api-stand-in.js';
import { makePki, registerApiService, startCluster, startSubresources, startVirtApi, stopCluster, type Cluster, type Pki } from './harness.js';

const GROUP_PATH = '/apis/subresources.virtualization.deckhouse.io/v1alpha2';

let cluster: Cluster;
let pki: Pki;
let virtApi: VirtApiStandIn;
let fn: ServerHandle;

beforeAll(async () => {
  cluster = await startCluster();
  pki = await makePki('system');
  virtApi = await startVirtApi(pki);
  fn = await startSubresources(cluster, pki, virtApi.url);
  await registerApiService(cluster, pki, fn.port);
}, 180_000);

afterAll(async () => {
  await fn?.close();
  await virtApi?.stop();
  await stopCluster(cluster);
});

const kubectl = (args: string[], opts?: Parameters<Cluster['kubectl']>[1]): ReturnType<Cluster['kubectl']> => cluster.kubectl(args, opts);

/** A direct HTTPS call to the function (not through the aggregator), with or without a client pair. */
function direct(path: string, opts: { cert?: string; key?: string; headers?: Record<string, string>; method?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: fn.port, path, method: opts.method ?? 'GET', ca: pki.caPem, servername: 'subresources-api.d8-virtualization.svc', cert: opts.cert, key: opts.key, headers: opts.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('discovery and OpenAPI through the aggregator', () => {
  it('kubectl get --raw lists the resources and subresources of v1alpha2', async () => {
    const res = await kubectl(['get', '--raw', GROUP_PATH]);
    expect(res.stderr).toBe('');
    const list = JSON.parse(res.stdout) as { groupVersion: string; resources: Array<{ name: string; verbs: string[] }> };
    expect(list.groupVersion).toBe('subresources.virtualization.deckhouse.io/v1alpha2');
    expect(Object.fromEntries(list.resources.map((r) => [r.name, r.verbs]))).toEqual({
      virtualmachines: ['get'],
      'virtualmachines/console': ['get', 'create'],
      'virtualmachines/vnc': ['get', 'create'],
      'virtualmachines/portforward': ['get', 'create'],
      'virtualmachines/addvolume': ['update'],
      'virtualmachines/removevolume': ['update'],
      'virtualmachines/freeze': ['update'],
      'virtualmachines/unfreeze': ['update'],
      'virtualmachines/cancelevacuation': ['update'],
      'virtualmachines/addresourceclaim': ['update'],
      'virtualmachines/removeresourceclaim': ['update'],
      'virtualmachines/scale': ['get'],
    });
  });

  it('kubectl api-resources shows the group next to the main one, which keeps the short names', async () => {
    const res = await kubectl(['api-resources', '--api-group=subresources.virtualization.deckhouse.io', '-o', 'name']);
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toBe('virtualmachines.subresources.virtualization.deckhouse.io');
  });

  it('the aggregator merges our OpenAPI v3 document', async () => {
    // The aggregator fetches a new APIService's document in the background.
    const entry = await waitFor('our group in the /openapi/v3 index', async () => {
      const index = JSON.parse((await kubectl(['get', '--raw', '/openapi/v3'])).stdout) as { paths: Record<string, { serverRelativeURL: string }> };
      return index.paths['apis/subresources.virtualization.deckhouse.io/v1alpha2'];
    }, { timeoutMs: 60_000, intervalMs: 500 });
    const doc = JSON.parse((await kubectl(['get', '--raw', entry.serverRelativeURL])).stdout) as { info: { title: string }; paths: Record<string, unknown> };
    expect(doc.info.title).toBe('VirtualizationAPI');
    expect(Object.keys(doc.paths)).toContain(`${GROUP_PATH}/namespaces/{namespace}/virtualmachines/{name}/console`);
  });
});

describe('who may call it directly', () => {
  it('answers 401 without a client certificate', async () => {
    const res = await direct(GROUP_PATH, { headers: { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' } });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized', message: expect.stringContaining('no client certificate') });
  });

  it('answers 401 to a certificate of another CA, even one the apiserver trusts for users', async () => {
    const res = await direct(GROUP_PATH, { cert: pki.virtApiServing.cert, key: pki.virtApiServing.key, headers: { 'X-Remote-User': 'admin' } });
    expect(res.status).toBe(401);
    expect(res.body).toContain('not signed by the front-proxy CA');
  });

  it('answers 401 to the front proxy when it names no user', async () => {
    const res = await direct(GROUP_PATH, { cert: pki.frontProxy.cert, key: pki.frontProxy.key });
    expect(res.status).toBe(401);
    expect(res.body).toContain('no user in the request headers (X-Remote-User)');
  });

  it('serves the front proxy naming a user, and keeps serving after the refusals', async () => {
    const res = await direct(GROUP_PATH, { cert: pki.frontProxy.cert, key: pki.frontProxy.key, headers: { 'X-Remote-User': 'someone' } });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'APIResourceList' });
  });
});
