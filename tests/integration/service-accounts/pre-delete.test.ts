/**
 * The pre-delete clean-up (functions/pre-delete) under exactly the RBAC the install gives it
 * (knative/rbac/components/pre-delete.yaml): the function, served by the function host, and the hook
 * Job entry both get a kubeconfig that impersonates the `pre-delete` ServiceAccount and run with their
 * default targets, the KubeVirt and CDI objects named `config`. They read the ModuleConfig first, refuse
 * (with a Warning Event, twice: created, then its series patched) while it is enabled, and once it is
 * gone remove the targets; the apiserver
 * refuses none of their requests; removing any one rule makes one of them denied; and the role
 * grants nothing they do not request.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeClient } from '../../../shared/kube/index.js';
import { serve } from '../../../shared/runtime/index.js';
import { binaryHeaders, send } from '../../../shared/runtime/testing/index.js';
import { preDelete } from '../../../functions/pre-delete/index.js';
import { EXIT, runJob } from '../../../functions/pre-delete/run-job.js';
import { DEFAULT_TARGETS } from '../../../functions/pre-delete/config.js';
import { newKubeConfig } from '../../env/index.js';
import { adminKube, createTarget, MODULE_CONFIG_NAME, read, setModuleConfig } from '../pre-delete/fixtures.js';
import { installDeckhouseCrds } from '../../env/index.js';
import {
  applyComponentRbac,
  itNeedsEveryRuleAndNothingMore,
  describeRequest,
  loadComponentRbac,
  requestsMadeBy,
  serviceAccountClient,
  serviceAccountKubeconfig,
  whoAmI,
  type ApiRequest,
  type ComponentRbac,
} from './component-rbac.js';

const admin = new KubeClient(newKubeConfig());
const targetsAdmin = adminKube();
let rbac: ComponentRbac;
let kubeconfig = '';
let requests: ApiRequest[] = [];

beforeAll(async () => {
  rbac = await loadComponentRbac('pre-delete');
  await Promise.all([applyComponentRbac(rbac), installDeckhouseCrds()]);
  kubeconfig = await serviceAccountKubeconfig(rbac);
});

afterAll(() => {
  admin.close();
  targetsAdmin.close();
});

async function createDefaultTargets(): Promise<void> {
  for (const t of DEFAULT_TARGETS) await createTarget(targetsAdmin, t);
}

describe('the pre-delete clean-up with only the pre-delete ServiceAccount rights', () => {
  it('acts as the pre-delete ServiceAccount through its kubeconfig', async () => {
    const kube = KubeClient.fromSource({ kubeconfigPath: kubeconfig });
    try {
      expect((await whoAmI(kube)).username).toBe('system:serviceaccount:d8-virtualization:pre-delete');
    } finally {
      kube.close();
    }
  });

  it('refuses while the ModuleConfig is enabled, then removes the KubeVirt and CDI `config` objects as a function and as the hook Job, refused nothing by the apiserver', async () => {
    const since = Date.now();
    const env = { KUBECONFIG: kubeconfig, WAIT_TIMEOUT: '20s', POLL_INTERVAL: '100ms', MODULE_CONFIG_NAME, SENDER_AUTH: 'none' };

    await createDefaultTargets();
    await setModuleConfig(targetsAdmin, true);
    const host = await serve(preDelete, { env: { ...env, PORT: '0', HOST: '127.0.0.1' } });
    const deleted = (): Promise<{ status: number }> =>
      send(host.url, {
        method: 'POST',
        headers: binaryHeaders({ id: 'sa-delete', type: 'dev.knative.apiserver.resource.delete', source: 'https://10.96.0.1:443' }),
        body: JSON.stringify({ apiVersion: 'deckhouse.io/v1alpha1', kind: 'ModuleConfig', metadata: { name: MODULE_CONFIG_NAME }, spec: { enabled: true } }),
      });
    try {
      expect([(await deleted()).status, (await deleted()).status]).toEqual([409, 409]);
      await setModuleConfig(targetsAdmin, undefined);
      expect((await deleted()).status).toBe(204);
    } finally {
      await host.close();
    }
    expect(await Promise.all(DEFAULT_TARGETS.map((t) => read(targetsAdmin, t)))).toEqual([undefined, undefined]);

    await createDefaultTargets();
    await expect(runJob(env)).resolves.toBe(EXIT.done);
    expect(await Promise.all(DEFAULT_TARGETS.map((t) => read(targetsAdmin, t)))).toEqual([undefined, undefined]);

    const kube = serviceAccountClient(rbac);
    const seen = await requestsMadeBy(kube, rbac, since).finally(() => kube.close());
    requests = seen.map((s) => s.request);
    expect(seen.filter((s) => s.codes.includes(403)).map((s) => describeRequest(s.request))).toEqual([]);
    const events = requests.map(describeRequest).filter((r) => r.includes('events.events.k8s.io'));
    expect(events.map((r) => r.replace(/ named .*/, ''))).toEqual(['create events.events.k8s.io in default', 'patch events.events.k8s.io in default']);
    expect([...new Set(requests.map(describeRequest).filter((r) => !events.includes(r)))].sort()).toEqual([
      'delete internalvirtualizationcdis.cdi.internal.virtualization.deckhouse.io named config',
      'delete internalvirtualizationkubevirts.internal.virtualization.deckhouse.io in d8-virtualization named config',
      'get internalvirtualizationcdis.cdi.internal.virtualization.deckhouse.io named config',
      'get internalvirtualizationkubevirts.internal.virtualization.deckhouse.io in d8-virtualization named config',
      `get moduleconfigs.deckhouse.io named ${MODULE_CONFIG_NAME}`,
    ]);
  });

  itNeedsEveryRuleAndNothingMore('the clean-up does', () => ({ admin, rbac, requests }));
});
