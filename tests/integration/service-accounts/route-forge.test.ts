/**
 * vm-route-forge (daemons/route-forge/daemon.ts: the ModuleConfig CIDR source and the informers on
 * VMs and CiliumNodes, cluster-wide as the DaemonSet runs it) under exactly the RBAC the install gives
 * it (knative/daemons/route-forge/rbac.yaml), through a client impersonating its ServiceAccount. The
 * kernel is the in-memory fake: what is checked here is the apiserver side. Every informer syncs and
 * a VM gets its route, the apiserver refuses none of the requests, removing any one rule makes one
 * of them denied, and the role grants nothing unused (in particular no write).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../../daemons/route-forge/config.js';
import { runDaemon } from '../../../daemons/route-forge/daemon.js';
import { FakeKernel } from '../../../daemons/route-forge/fake-kernel.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { rootLogger } from '../../../shared/log/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace, installDeckhouseCrds, newKubeConfig } from '../../env/index.js';
import { KNATIVE_DIR, readManifests } from '../install/manifests.js';
import { ClusterWriter, installCiliumNodeCrd } from '../route-forge/cluster.js';
import {
  applyComponentRbac,
  itNeedsEveryRuleAndNothingMore,
  describeRequest,
  isResourceRequest,
  requestsMadeBy,
  serviceAccountClient,
  type ApiRequest,
  type ComponentRbac,
  type SeenRequest,
  itActsAsItsServiceAccount,
  everyListWatched,
} from './component-rbac.js';

const id = randomBytes(3).toString('hex');
const nodeName = `rf-sa-${id}`;
const admin = new KubeClient(newKubeConfig());
const cluster = new ClusterWriter();
let rbac: ComponentRbac;
let kube: KubeClient;
let ns = '';
let requests: ApiRequest[] = [];

/** The route-forge objects of the install, as a ComponentRbac (they live beside its DaemonSet). */
async function loadRouteForgeRbac(): Promise<ComponentRbac> {
  const objects = await readManifests(`${KNATIVE_DIR}daemons/route-forge/rbac.yaml`);
  const accounts = objects.filter((m) => m.kind === 'ServiceAccount');
  const sa = accounts[0]?.metadata;
  if (accounts.length !== 1 || sa?.namespace === undefined) throw new Error('rbac.yaml must hold exactly one namespaced ServiceAccount');
  return {
    component: 'route-forge',
    objects,
    serviceAccount: { name: sa.name, namespace: sa.namespace },
    user: `system:serviceaccount:${sa.namespace}:${sa.name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'],
  };
}

beforeAll(async () => {
  rbac = await loadRouteForgeRbac();
  await Promise.all([applyComponentRbac(rbac), installDeckhouseCrds(), installCiliumNodeCrd()]);
  kube = serviceAccountClient(rbac, { requestTimeoutMs: 10_000 });
  ns = await freshNamespace('route-forge-sa');
  await cluster.node(nodeName, '10.200.0.2');
  await cluster.vm(ns, 'vm1', { ipAddress: '10.177.0.5', nodeName });
});

afterAll(async () => {
  kube.close();
  admin.close();
  await cluster.nodes.delete({ name: nodeName }).catch(() => undefined);
  cluster.close();
});

describe('vm-route-forge with only its ServiceAccount rights', () => {
  itActsAsItsServiceAccount('route-forge', () => ({ kube, rbac }));

  it('syncs its informers cluster-wide and routes a VM, refused nothing', async () => {
    const since = Date.now();
    const kernel = new FakeKernel();
    kernel.lookups.set('10.200.0.2', { ok: true, local: false, dev: 'eth0', prefsrc: '10.200.0.1' });
    const config = loadConfig({ VIRTUAL_MACHINE_CIDRS: '10.177.0.0/16', METRICS_AUTH: 'none', HEALTH_HOST: '127.0.0.1', HEALTH_PORT: '0' });
    const stop = new AbortController();
    const logger = rootLogger.child({ test: 'route-forge-sa' });
    const daemon = runDaemon({ config, kube: serviceAccountClient(rbac), signal: stop.signal, kernel, logger });
    let seen: SeenRequest[];
    try {
      await waitFor('the VM routed', () => kernel.routes.get('10.177.0.5/32')?.gateway === '10.200.0.2');
      expect(daemon.ready()).toBe(true);
      seen = await waitFor('a watch for every list', async () => {
        const now = await requestsMadeBy(kube, rbac, since);
        return everyListWatched(now) && now.filter((s) => s.request.verb === 'watch').length >= 3 ? now : undefined;
      });
    } finally {
      stop.abort();
      await daemon.done;
    }
    requests = seen.map((s) => s.request);
    const resources = [...new Set(requests.filter(isResourceRequest).map((r) => `${r.verb} ${r.resource}`))].sort();
    expect(resources).toEqual([
      'list ciliumnodes',
      'list moduleconfigs',
      'list virtualmachines',
      'watch ciliumnodes',
      'watch moduleconfigs',
      'watch virtualmachines',
    ]);
    expect(seen.filter((s) => s.codes.includes(403)).map((s) => describeRequest(s.request))).toEqual([]);
  });

  itNeedsEveryRuleAndNothingMore('its informers do', () => ({ admin, rbac, requests }));
});
