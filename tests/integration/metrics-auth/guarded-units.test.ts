/**
 * /metrics of the function host and of the controller daemon behind Kubernetes authentication and
 * authorization, against the real apiserver with real ServiceAccount tokens (TokenRequest API), in
 * their shipped defaults (METRICS_AUTH unset, so `kubernetes`):
 * no token 401, a garbage token 401, a ServiceAccount without the right 403, the install's scraper
 * ServiceAccount (its role applied from knative/monitoring/scraper.yaml) 200; with the apiserver
 * unreachable 503 while both health endpoints stay 200.
 *
 * The function host reviews with the admin kubeconfig (KUBECONFIG); the controller with its own
 * ServiceAccount (knative/rbac/components/controller.yaml applied, impersonated), so its
 * system:auth-delegator binding is what lets it review.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../../daemons/controller/config.js';
import { runDaemon } from '../../../daemons/controller/daemon.js';
import { sampleEcho } from '../../../functions/sample-echo/index.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { serve } from '../../../shared/runtime/index.js';
import { freshNamespace, getTestEnv, impersonatingKubeConfig, newKubeConfig } from '../../env/index.js';
import {
  MODULE_NAMESPACE,
  SCRAPER,
  applyFromKnative,
  applyScraperRole,
  createServiceAccount,
  get,
  serviceAccountToken,
  unreachableKubeconfig,
} from './fixtures.js';
import { waitFor } from '../../../shared/testing/wait.js';

interface Running {
  readonly url: string;
  close(): Promise<void>;
}

interface Unit {
  readonly name: string;
  /** A series only this unit's /metrics has. */
  readonly marker: string;
  /** Started against the test cluster, or with an apiserver that does not answer. */
  start(apiserver: 'reachable' | 'unreachable'): Promise<Running>;
}

const admin = new KubeClient(newKubeConfig());
const closers: Array<() => Promise<void> | void> = [];
const tokens = { scraper: '', stranger: '' };

const functionHost: Unit = {
  name: 'the function host (sample-echo)',
  marker: 'http_requests_in_flight',
  async start(apiserver) {
    const kubeconfig = apiserver === 'reachable' ? getTestEnv().kubeconfigPath : await unreachableKubeconfig();
    const handle = await serve(sampleEcho, { env: { PORT: '0', HOST: '127.0.0.1', KUBECONFIG: kubeconfig } });
    return { url: handle.url, close: async () => void (await handle.close()) };
  },
};

const controller: Unit = {
  name: 'the controller daemon',
  marker: 'leader_election_master_status',
  async start(apiserver) {
    const kube =
      apiserver === 'reachable'
        ? new KubeClient(impersonatingKubeConfig(`system:serviceaccount:${MODULE_NAMESPACE}:controller`))
        : KubeClient.fromSource({ kubeconfigPath: await unreachableKubeconfig() });
    const config = loadConfig({
      WATCH_NAMESPACE: await freshNamespace('metrics-ctl'),
      CLUSTER_OBJECTS_SELECTOR: `metrics-auth-test=${randomBytes(3).toString('hex')}`,
      MODULE_CONFIG_WATCH: 'false',
      POD_NAME: 'metrics-auth-test',
      POD_NAMESPACE: MODULE_NAMESPACE,
      // Unreachable: a standby that never gets the Lease, as a replica cut off from the apiserver is.
      LEADER_ELECTION: apiserver === 'reachable' ? 'false' : 'true',
      LEADER_ELECTION_LEASE_NAME: `metrics-auth-${randomBytes(3).toString('hex')}`,
      HEALTH_PORT: '0',
      HEALTH_HOST: '127.0.0.1',
      CERT_ISSUER: 'off',
      LOG_LEVEL: 'silent',
    });
    const stop = new AbortController();
    const daemon = runDaemon({ config, kube, signal: stop.signal });
    const { port } = await daemon.health;
    // Stopping a leader before its caches have synced is not what this test is about: wait for them.
    if (apiserver === 'reachable') await waitFor('the controller to run its reconcilers', () => daemon.isLeading(), { timeoutMs: 60_000 });
    return {
      url: `http://127.0.0.1:${port}`,
      close: async () => {
        stop.abort();
        await daemon.done;
        kube.close();
      },
    };
  },
};

beforeAll(async () => {
  await applyScraperRole();
  await applyFromKnative('rbac/components/controller.yaml');
  const ns = await freshNamespace('metrics-auth');
  await createServiceAccount(admin, ns, 'stranger');
  tokens.scraper = await serviceAccountToken(admin, SCRAPER.namespace, SCRAPER.name);
  tokens.stranger = await serviceAccountToken(admin, ns, 'stranger');
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  admin.close();
});

describe.each([functionHost, controller])('/metrics of $name', (unit) => {
  let url = '';
  beforeAll(async () => {
    const running = await unit.start('reachable');
    closers.push(() => running.close());
    url = running.url;
  });

  it('answers 401 with a Bearer challenge without a token, and for a token the apiserver rejects', async () => {
    const none = await get(`${url}/metrics`);
    const garbage = await get(`${url}/metrics`, `garbage-${randomBytes(8).toString('hex')}`);
    expect([none.status, garbage.status]).toEqual([401, 401]);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(JSON.parse(garbage.text)).toEqual({ error: { code: 'UNAUTHORIZED', message: 'the bearer token was not accepted by the Kubernetes API' } });
    expect(garbage.text).not.toContain(unit.marker);
  });

  it('answers 403 to a real ServiceAccount token whose account may not get /metrics', async () => {
    const res = await get(`${url}/metrics`, tokens.stranger);
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text)).toMatchObject({
      error: { code: 'FORBIDDEN', message: expect.stringMatching(/^system:serviceaccount:metrics-auth-[0-9a-f]+:stranger may not get \/metrics/) },
    });
  });

  it("serves the metrics to the install's scraper ServiceAccount, and again from the cache", async () => {
    const first = await get(`${url}/metrics`, tokens.scraper);
    const second = await get(`${url}/metrics`, tokens.scraper);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(first.text).toContain(unit.marker);
  });

  it('answers 503 when the apiserver cannot be reached, while liveness and readiness stay 200', async () => {
    const cutOff = await unit.start('unreachable');
    closers.push(() => cutOff.close());
    const metrics = await get(`${cutOff.url}/metrics`, tokens.scraper);
    const live = await get(`${cutOff.url}/health/liveness`);
    const ready = await get(`${cutOff.url}/health/readiness`);
    expect([metrics.status, live.status, ready.status]).toEqual([503, 200, 200]);
    expect(JSON.parse(metrics.text)).toMatchObject({ error: { code: 'UNAVAILABLE' } });
    expect(metrics.headers.get('retry-after')).toBe('5');
    expect((await get(`${cutOff.url}/metrics`)).status).toBe(401);
  });
});
