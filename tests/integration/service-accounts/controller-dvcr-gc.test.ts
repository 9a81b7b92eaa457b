/**
 * DVCR garbage collection (daemons/controller/reconcilers/dvcr-gc) under exactly the RBAC the install
 * gives the controller (knative/rbac/components/controller.yaml), the controller in-process on a
 * client impersonating its ServiceAccount, against a real registry: its schedule (`* * * * *`) starts a
 * run (the Secret in d8-virtualization), the repository of an image that no longer exists is emptied,
 * the result is the Deployment `dvcr`'s GarbageCollection condition. From the apiserver's audit log:
 * no request of the run was refused, each rule of the Role `controller-dvcr-gc` is needed by one of
 * them (removed in turn, the apiserver denies a request the run made), and the Role grants nothing
 * the run did not use.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { NotFoundError } from '../../../shared/errors/index.js';
import type { KubeClient, ResourceClient } from '../../../shared/kube/index.js';
import { RegistryClient } from '../../../shared/oci/client.js';
import { parseImageReference } from '../../../shared/oci/reference.js';
import { startController, type RunningController } from '../../../daemons/controller/controller.js';
import type { Clients } from '../../../daemons/controller/kube/resources.js';
import { freshNamespace } from '../../env/index.js';
import { garbageCollectCommand, pushTestImage, startLocalRegistry, type LocalRegistry } from '../../env/local-registry.js';
import { GC_SECRET, createDvcrDeployment, deploymentsClient, gcCondition, runEnds, type Deployment } from '../controller/dvcr-gc-fixtures.js';
import { controllerConfig, mainKube, newScope, testClients, type Scope } from '../controller/fixtures.js';
import {
  applyComponentRbac,
  describeRequest,
  isResourceRequest,
  itActsAsItsServiceAccount,
  itNeedsEveryRuleAndNothingMore,
  loadComponentRbac,
  requestsMadeBy,
  serviceAccountClient,
  type ApiRequest,
  type ComponentRbac,
  type SeenRequest,
} from './component-rbac.js';

/** The module namespace: the Role is granted there only, so the run's Secret and Deployment live there. */
const MODULE_NS = 'd8-virtualization';
const ROLE = 'controller-dvcr-gc';
/** A run starts at the next whole minute, then waits for nothing: under three minutes on a busy machine. */
const RUN = 150_000;

let admin: KubeClient;
let c: Clients;
let deployments: ResourceClient<Deployment>;
let rbac: ComponentRbac;
/** The controller's RBAC with only the Role under test (and its binding): what the least-privilege checks take apart. */
let gcRbac: ComponentRbac;
let kube: KubeClient;
let registry: LocalRegistry;
let scope: Scope;
let controller: RunningController;
const abort = new AbortController();
let seen: SeenRequest[] = [];

async function removeLeftovers(): Promise<void> {
  const ignoreMissing = (err: unknown): void => {
    if (!(err instanceof NotFoundError)) throw err;
  };
  await c.secrets.delete({ namespace: MODULE_NS, name: GC_SECRET }).catch(ignoreMissing);
  await deployments.delete({ namespace: MODULE_NS, name: 'dvcr' }).catch(ignoreMissing);
}

beforeAll(async () => {
  admin = mainKube();
  c = testClients(admin);
  deployments = deploymentsClient(admin);
  rbac = await loadComponentRbac('controller');
  gcRbac = { ...rbac, objects: rbac.objects.filter((o) => o.metadata.name === ROLE) };
  await applyComponentRbac(rbac);
  await removeLeftovers();
  await createDvcrDeployment(deployments, MODULE_NS);
  kube = serviceAccountClient(rbac, { requestTimeoutMs: 10_000 });
  registry = await startLocalRegistry();
  scope = newScope(await freshNamespace('dvcr-gc-sa'));
});

afterAll(async () => {
  abort.abort();
  await controller?.stop();
  await registry?.stop();
  await removeLeftovers();
  kube?.close();
  admin.close();
});

describe('DVCR garbage collection as the controller ServiceAccount', () => {
  itActsAsItsServiceAccount('controller', () => ({ kube, rbac }));

  it(
    "runs on its schedule, empties a deleted image's repository and reports on the Deployment dvcr, with no request refused",
    async () => {
      expect(gcRbac.objects.map((o) => o.kind).sort()).toEqual(['Role', 'RoleBinding']);
      const since = Date.now();
      const ghost = `vi/${scope.namespace}/ghost`;
      await pushTestImage(registry.url, `${ghost}`, randomUUID(), 'an image whose VirtualImage is gone');
      const config = controllerConfig(scope, {
        STORAGE_RECONCILERS: 'true',
        POD_NAMESPACE: MODULE_NS,
        DVCR_ADDRESS: registry.host,
        DVCR_PLAIN_HTTP: 'true',
        DVCR_GC_COMMAND: garbageCollectCommand(registry),
        DVCR_GC_SCHEDULE: '* * * * *',
      });
      controller = await startController({ kube, config, signal: abort.signal });

      const message = await runEnds(c, deployments, MODULE_NS, 'Completed', RUN);
      expect(message).toMatch(/Deleted 1 image\(s\) of objects that no longer exist \(1 repositories emptied\); blobs freed\./);
      expect(await new RegistryClient(parseImageReference(`${registry.url}/${ghost}`)).listTags()).toEqual([]);
      expect(gcCondition(await deployments.get({ namespace: MODULE_NS, name: 'dvcr' }))?.status).toBe('False');

      seen = await requestsMadeBy(kube, rbac, since);
      expect(seen.filter((s) => s.codes.includes(403)).map((s) => describeRequest(s.request))).toEqual([]);
      const made = seen.map((s) => s.request).filter(isResourceRequest);
      const onDvcr = (verb: string, subresource?: string): boolean =>
        made.some((r) => r.verb === verb && r.resource === 'deployments' && r.subresource === subresource && r.namespace === MODULE_NS && r.name === 'dvcr');
      expect(onDvcr('get')).toBe(true);
      expect(onDvcr('patch', 'status')).toBe(true);
      expect(made.some((r) => r.verb === 'create' && r.resource === 'secrets' && r.namespace === MODULE_NS)).toBe(true);
    },
    RUN + 30_000,
  );

  itNeedsEveryRuleAndNothingMore('the run does', () => ({ admin, rbac: gcRbac, requests: seen.map((s): ApiRequest => s.request) }));
});
