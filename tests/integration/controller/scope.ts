/**
 * The scope of one test: its namespace and the token that marks its cluster-scoped objects, the test
 * side's clients, and the controller's environment for a scope (no jest here: the benchmarks import it).
 */
import { randomBytes } from 'node:crypto';
import { makeClients, type Clients } from '../../../daemons/controller/kube/resources.js';
import type { KubeClient } from '../../../shared/kube/index.js';

/** Label that scopes cluster-scoped objects (classes, nodes, cluster images) to one test. */
export const SCOPE_LABEL = 'test.virtualization.deckhouse.io/scope';

/** Writes made by the tests (the users and the parts of the world we play) use their own field manager. */
export const TEST_FIELD_MANAGER = 'controller-integration-test';

export interface Scope {
  namespace: string;
  /** A unique token for cluster-scoped names and the scope label value. */
  id: string;
}

export function newScope(namespace: string): Scope {
  return { namespace, id: randomBytes(3).toString('hex') };
}

/** Clients for the test side (users, KubeVirt, the disk controller). */
export function testClients(kube: KubeClient): Clients {
  return makeClients(kube, TEST_FIELD_MANAGER);
}

/** The controller's environment for a scope (in-process: fixtures.ts controllerConfig; as a process: a benchmark), `env` over it. */
export function controllerEnv(scope: Scope, env: Record<string, string> = {}): Record<string, string> {
  return {
    WATCH_NAMESPACE: scope.namespace,
    // Its own module namespace too: a DVCR garbage collection run (a Secret there) of one test's
    // controller is never seen by another test's controller.
    POD_NAMESPACE: scope.namespace,
    CLUSTER_OBJECTS_SELECTOR: `${SCOPE_LABEL}=${scope.id}`,
    MODULE_CONFIG_WATCH: 'false',
    // The certificate manager has tests of its own (tests/integration/install/certificates.test.ts).
    CERT_ISSUER: 'off',
    // These tests play the storage reconcilers (builders.ts makeDiskReady, makeImageReady); tests/integration/controller/disks runs them.
    STORAGE_RECONCILERS: 'false',
    LEADER_ELECTION: 'false',
    HEALTH_PORT: '0',
    LOG_LEVEL: 'silent',
    ...env,
  };
}
